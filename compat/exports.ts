/*
 * Type-checked by compat/run.sh under `moduleResolution: node16` only, where the exports map
 * applies (the classic `node10` resolution ignores it): paths outside the map are private.
 */
// @ts-expect-error: dist/ files are not part of the public surface.
import { informer as privateInformer } from 'rx-informer/dist/informer';

export const hidden: unknown = privateInformer;
