// The README's examples are examples/*.mjs verbatim, and running each prints exactly the output the
// README shows under it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

const root = new URL('../../', import.meta.url);
const readme = readFileSync(new URL('README.md', root), 'utf8');

for (const file of ['examples/quickstart.mjs', 'examples/digits.mjs', 'examples/loop.mjs']) {
  const example = readFileSync(new URL(file, root), 'utf8').trimEnd();

  test(`the README shows ${file} verbatim`, () => {
    assert.ok(readme.includes('```js\n' + example + '\n```'), `README example differs from ${file}`);
  });

  test(`running ${file} prints the README's output`, () => {
    const shown = readme.split('```js\n' + example + '\n```')[1].match(/```text\n([\s\S]*?)\n```/)[1];
    const printed = execFileSync(process.execPath, [file], { cwd: root, encoding: 'utf8' }).trimEnd();
    // The one line that names the build differs between the two builds.
    const strip = (text) => text.replace(/^backend: .*$/m, 'backend: <isa>');
    assert.equal(strip(printed), strip(shown));
  });
}
