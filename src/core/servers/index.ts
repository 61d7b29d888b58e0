export * from './types.js';
export * from './engines/index.js';
export * from './engine-probe.js';
export * from './failures.js';
export * from './manager.js';

export * from './ports.js';
export * from './presets.js';
export * from './process-group.js';
export * from './redact.js';
export * from './server-errors.js';
export * from './variants.js';
