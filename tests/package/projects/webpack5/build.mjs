// webpack 5 with its defaults but for the entry and output folder: builds tests/package/app into dist/ and prints
// the stats' errors, warnings and assets as JSON.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import webpack from 'webpack';

const dist = fileURLToPath(new URL('./dist/', import.meta.url));
const compiler = webpack({ mode: 'production', entry: './main.js', output: { path: dist } });
compiler.run((error, stats) => {
  compiler.close(() => {});
  if (error) throw error;
  const { errors, warnings, assets } = stats.toJson({ all: false, errors: true, warnings: true, assets: true });
  writeFileSync(`${dist}index.html`, '<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,"><script src="main.js"></script>');
  console.log(JSON.stringify({ errors: errors.map((e) => e.message), warnings: warnings.map((w) => w.message), assets: assets.map((a) => a.name) }));
});
