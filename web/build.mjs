#!/usr/bin/env node
// Builds the dashboard: `npm run build -- --outDir DIR` writes DIR/index.html and every asset
// gpupoold serves at /ui/ (default DIR: web/dist). No bundler: the sources are plain ES modules
// and CSS, copied as they are, with uPlot's distribution files from node_modules (installed by
// `npm ci` from package-lock.json) in vendor/.
//
// Scripts and style sheets get content-hashed names (main.3f9a2c1b0d4e5f67.js), so gpupoold can
// let browsers cache them for a year; the references between them (import specifiers, the
// links in index.html) are rewritten to those names, dependencies first, so a change in any
// module changes the name of every module that imports it. index.html and the icon keep their
// names (they are revalidated).
//
// The output is written to a new directory beside DIR and then renamed into place, so a running
// gpupoold never serves half a build.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const src = join(here, 'src');

function usage(msg) {
  if (msg) console.error(`build.mjs: ${msg}`);
  console.error('usage: node build.mjs [--outDir DIR]   (npm run build -- --outDir DIR)');
  process.exit(2);
}

function parseArgs(argv) {
  let outDir = join(here, 'dist');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--outDir' || a === '--out-dir') {
      if (i + 1 >= argv.length) usage(`${a} needs a directory`);
      outDir = argv[++i];
    } else if (a.startsWith('--outDir=')) {
      outDir = a.slice('--outDir='.length);
    } else if (a === '-h' || a === '--help') {
      usage();
    } else {
      usage(`unknown argument ${a}`);
    }
  }
  return resolve(outDir);
}

// Files under dir, as POSIX paths relative to it.
function walk(dir, base = dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...walk(p, base));
    else out.push(relative(base, p).split(sep).join('/'));
  }
  return out;
}

// The asset set: path in the output -> contents (Buffer).
function collect() {
  const assets = new Map();
  for (const rel of walk(src)) assets.set(rel, readFileSync(join(src, rel)));
  const uplot = join(here, 'node_modules', 'uplot');
  if (!existsSync(join(uplot, 'dist', 'uPlot.esm.js'))) {
    console.error('build.mjs: node_modules/uplot is missing: run `npm ci` in web/ first');
    process.exit(1);
  }
  assets.set('vendor/uPlot.esm.js', readFileSync(join(uplot, 'dist', 'uPlot.esm.js')));
  assets.set('vendor/uPlot.min.css', readFileSync(join(uplot, 'dist', 'uPlot.min.css')));
  assets.set('vendor/uPlot.LICENSE.txt', readFileSync(join(uplot, 'LICENSE')));
  return assets;
}

const HASHED = /\.(js|css)$/;
// Relative import specifiers: `from './x.js'`, `import './x.js'`, `import('./x.js')`.
const IMPORT = /(\bfrom\s*|\bimport\s*\(?\s*)(['"])(\.\.?\/[^'"]+)\2/g;

function hashedName(rel, content) {
  const digest = createHash('sha256').update(content).digest('hex').slice(0, 16);
  return rel.replace(/\.(js|css)$/, `.${digest}.$1`);
}

// Renames the scripts and style sheets by content, rewriting the imports between scripts.
function rename(assets) {
  const names = new Map(); // source path -> output path
  const out = new Map();
  const visiting = new Set();
  const visit = (rel, from) => {
    if (names.has(rel)) return names.get(rel);
    if (!assets.has(rel)) throw new Error(`${from}: imports ${rel}, which does not exist`);
    if (visiting.has(rel)) throw new Error(`${rel}: import cycle (through ${from})`);
    visiting.add(rel);
    let content = assets.get(rel);
    if (rel.endsWith('.js')) {
      const text = content.toString('utf8').replace(IMPORT, (m, head, q, spec) => {
        const dep = posix.normalize(posix.join(posix.dirname(rel), spec));
        const target = visit(dep, rel);
        let r = posix.relative(posix.dirname(rel), target);
        if (!r.startsWith('.')) r = `./${r}`;
        return `${head}${q}${r}${q}`;
      });
      content = Buffer.from(text, 'utf8');
    }
    const name = HASHED.test(rel) ? hashedName(rel, content) : rel;
    visiting.delete(rel);
    names.set(rel, name);
    out.set(name, content);
    return name;
  };
  for (const rel of assets.keys()) {
    if (HASHED.test(rel)) visit(rel, rel);
  }
  for (const [rel, content] of assets) {
    if (HASHED.test(rel)) continue;
    if (rel.endsWith('.html')) {
      const text = content.toString('utf8').replace(/\b(src|href)="([^"#:?]+)"/g, (m, attr, ref) => {
        const target = names.get(posix.normalize(posix.join(posix.dirname(rel), ref)));
        return target ? `${attr}="${posix.relative(posix.dirname(rel), target)}"` : m;
      });
      out.set(rel, Buffer.from(text, 'utf8'));
    } else {
      out.set(rel, content);
    }
  }
  return out;
}

// Refuses to replace a directory that does not look like a dashboard build (so a mistyped
// --outDir cannot delete something else).
function checkTarget(outDir) {
  const root = resolve('/');
  if (outDir === root || outDir === here || here.startsWith(outDir + sep) || outDir === src) {
    console.error(`build.mjs: refusing to write the build to ${outDir}`);
    process.exit(2);
  }
  if (existsSync(outDir)) {
    const entries = readdirSync(outDir);
    if (entries.length && !entries.includes('index.html')) {
      console.error(`build.mjs: ${outDir} is not empty and holds no index.html: not a dashboard build, not replacing it`);
      process.exit(2);
    }
  }
}

function main() {
  const outDir = parseArgs(process.argv.slice(2));
  checkTarget(outDir);
  const files = rename(collect());
  if (!files.has('index.html')) throw new Error('src/index.html is missing');
  const parent = dirname(outDir);
  mkdirSync(parent, { recursive: true });
  const tmp = join(parent, `.${posix.basename(outDir)}.build-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  let bytes = 0;
  for (const [rel, content] of files) {
    const p = join(tmp, ...rel.split('/'));
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, content);
    bytes += content.length;
  }
  const old = `${tmp}.old`;
  if (existsSync(outDir)) renameSync(outDir, old);
  renameSync(tmp, outDir);
  rmSync(old, { recursive: true, force: true });
  console.log(`build.mjs: ${files.size} files, ${Math.round(bytes / 1024)} KiB in ${outDir}`);
}

try {
  main();
} catch (e) {
  console.error(`build.mjs: ${e.message}`);
  process.exit(1);
}
