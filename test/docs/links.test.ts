import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';

const documents = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsIn(path: string): Set<string> {
  const text = readFileSync(path, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1] ?? '')));
}

describe('documentation links', () => {
  it.each(documents)('every relative link in %s resolves, anchors included', (doc) => {
    const text = readFileSync(doc, 'utf8').replace(/```[\s\S]*?```/g, '');
    const links = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '').filter((l) => !/^[a-z]+:/i.test(l));
    const broken = links.filter((link) => {
      const [file = '', anchor] = link.split('#');
      const target = file === '' ? doc : normalize(join(dirname(doc), file));
      if (!existsSync(target)) return true;
      return anchor !== undefined && target.endsWith('.md') && !anchorsIn(target).has(anchor);
    });
    expect(broken).toEqual([]);
  });

  // A test or source file a document names (the interleavings table, the testing guide) moves with the code: a
  // stale name sends a reader nowhere. Globs and placeholders (`*`, `<name>`, `…`) are patterns, not files.
  it.each(documents)('every file %s names in code exists', (doc) => {
    const named = [...readFileSync(doc, 'utf8').matchAll(/`((?:src|test|dev|bench|emulators|functions|tools|infra|docs)\/[^`\s]*\.[a-z]+)`/g)]
      .map((m) => m[1] ?? '')
      .filter((path) => !/[*<>{}…]|\.\.\./.test(path));
    expect(named.filter((path) => !existsSync(path))).toEqual([]);
  });

  it.each(documents)('every test %s quotes after its file is in that file', (doc) => {
    const quoted = [...readFileSync(doc, 'utf8').matchAll(/`((?:test|emulators)\/[^`\s]*\.test\.ts)`,? "([^"]+)"/g)];
    const missing = quoted.filter(([, file = '', name = '']) => !readFileSync(file, 'utf8').includes(name.replace(/(…|\.\.\.)$/, '')));
    expect(missing.map(([, file, name]) => `${file}: ${name}`)).toEqual([]);
  });

  it('the README links every document in docs/', () => {
    const readme = readFileSync('README.md', 'utf8');
    for (const doc of documents.filter((d) => d !== 'README.md')) expect(readme, doc).toContain(`](${doc})`);
  });

  it('the README stays what a newcomer reads first: under 250 lines', () => {
    expect(readFileSync('README.md', 'utf8').split('\n').length).toBeLessThan(250);
  });

  it('the LICENSE is the one package.json names', () => {
    const { license } = JSON.parse(readFileSync('package.json', 'utf8')) as { license: string };
    expect(license).toBe('MIT');
    expect(readFileSync('LICENSE', 'utf8')).toMatch(/^MIT License\n/);
  });
});
