// A worker process of a fake engine: stays in the engine's process group, holds its stdout, does nothing.
// It ignores the signals named in FAKE_ENGINE_IGNORE (like a stuck worker), so only SIGKILL ends it then.
const ignore = (process.env.FAKE_ENGINE_IGNORE ?? '').split(',').filter(Boolean);
for (const sig of ignore) process.on(sig, () => undefined);
setInterval(() => undefined, 60_000);
process.send?.('ready');
