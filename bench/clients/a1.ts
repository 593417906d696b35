/** Floor a1: read the bytes, split lines, JSON.parse, drop. */
import { floorClient } from './floor';
import { runClient } from './harness';

void runClient((config, handlers) => floorClient(config, handlers, false));
