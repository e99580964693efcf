// The package's public entry: the maker SDK (a typed client for the maker socket) and the service factory.
export * from './sdk/index.js';
export { createService, type RunningService } from './boot/app.js';
export { loadConfig, type Config } from './config/config.js';
