'use strict';
/*
 * `@kubernetes/client-node` for code that Jest loads (jest.config.js maps the name here), so that
 * examples and specs import it by its name, as users do. client-node 2.x is an ES module: Jest's
 * module registry cannot load it, Node 22's own `require` can, and `process.getBuiltinModule` is
 * not intercepted by Jest. The instance is the one rx-informer-apiserver loads the same way.
 */
module.exports = process.getBuiltinModule('node:module').createRequire(__filename)('@kubernetes/client-node');
