// A file imported with ?raw is its text, bundled in at build time (vite natively; the CLI's esbuild by a plugin).
declare module '*?raw' {
  const text: string;
  // eslint-disable-next-line no-restricted-syntax -- the bundlers hand the text over as the default export
  export default text;
}
