// Builds agent-chat-ui, LangChain's chat UI for LangGraph servers, from its published source:
// the Vite template of create-agent-chat-app (pinned in package.json, installed by `npm ci`),
// bundled by the pinned Vite with the template's own plugins (React, Tailwind) and alias.
// Nothing is downloaded: the template and every package it imports come from node_modules.
//
// The bundle is cached under AGENT_CHAT_UI_CACHE (default ~/.cache/agentengine-test/agent-chat-ui),
// keyed by package-lock.json and this file, so a second build is free. Prints the bundle's
// directory (index.html + assets/).
//
//   node build.mjs            build if not cached, print the directory
//   node build.mjs --offline  print the cached directory, or nothing (exit 1) if there is none
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const template = join(here, 'node_modules', 'create-agent-chat-app', 'templates', 'vite');
const key = createHash('sha256')
  .update(readFileSync(join(here, 'package-lock.json')))
  .update(readFileSync(fileURLToPath(import.meta.url)))
  .digest('hex').slice(0, 16);
const cache = process.env.AGENT_CHAT_UI_CACHE || join(homedir(), '.cache', 'agentengine-test', 'agent-chat-ui');
const out = join(cache, key);
const dist = join(out, 'dist');

if (existsSync(join(dist, 'index.html'))) {
  console.log(dist);
  process.exit(0);
}
if (process.argv.includes('--offline')) process.exit(1);
if (!existsSync(join(template, 'src', 'main.tsx'))) {
  console.error(`agent-chat-ui's template is missing (${template}): run npm ci in ${here}`);
  process.exit(1);
}

// The template is copied out of node_modules: Tailwind's class scan skips node_modules
// directories. Its imports resolve through a node_modules link to this package's.
const tmp = join(cache, `${key}.tmp-${process.pid}`);
rmSync(tmp, { recursive: true, force: true });
mkdirSync(tmp, { recursive: true });
const src = join(tmp, 'app');
cpSync(template, src, { recursive: true });
symlinkSync(join(here, 'node_modules'), join(src, 'node_modules'), 'dir');

const { build } = await import('vite');
const { default: react } = await import('@vitejs/plugin-react');
const { default: tailwindcss } = await import('@tailwindcss/vite');
await build({
  configFile: false,
  root: src,
  logLevel: 'warn',
  plugins: [react(), tailwindcss()],
  resolve: { alias: { '@': join(src, 'src') } },
  build: { outDir: join(tmp, 'dist'), emptyOutDir: true, chunkSizeWarningLimit: 8192 },
});
rmSync(out, { recursive: true, force: true });
renameSync(tmp, out);
console.log(dist);
