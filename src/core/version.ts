/** servebench's version, recorded in every run. */
export const SERVEBENCH_VERSION = '0.1.0';
