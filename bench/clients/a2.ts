/** Floor a2: read, split, JSON.parse, keep every object in one plain mutable Map. */
import { floorClient } from './floor';
import { runClient } from './harness';

void runClient((config, handlers) => floorClient(config, handlers, true));
