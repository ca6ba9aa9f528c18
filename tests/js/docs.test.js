// The documentation's examples are real: every ```js snippet in docs/*.md runs (after the page's
// first snippet, its preamble) and prints exactly the ```text block written under it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const root = new URL('../../', import.meta.url);
const SNIPPET = /```js\n([\s\S]*?)```\n(?:```text\n([\s\S]*?)```\n)?/g;

for (const page of ['docs/quantization.md', 'docs/qtensor-format.md', 'docs/ptq.md', 'docs/pytorch2.md']) {
  test(`${page}: every example prints what the page shows`, () => {
    const text = readFileSync(new URL(page, root), 'utf8');
    const snippets = [...text.matchAll(SNIPPET)];
    assert.ok(snippets.length >= 2, 'the page has a preamble and examples');
    const preamble = snippets[0][1].replaceAll("'./js/index.js'", `'${new URL('js/index.js', root).href}'`);
    const dir = mkdtempSync(join(tmpdir(), 'qwasm-docs-'));
    try {
      snippets.slice(1).forEach(([, code, shown], i) => {
        assert.notEqual(shown, undefined, `snippet ${i + 1} has no output block`);
        const file = join(dir, `snippet-${i + 1}.mjs`);
        writeFileSync(file, `${preamble}{\n${code}}\n`);
        const printed = execFileSync(process.execPath, [file], { encoding: 'utf8' });
        assert.equal(printed, shown, `snippet ${i + 1} of ${page}:\n${code}`);
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
