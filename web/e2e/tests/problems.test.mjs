// The banner of agents that cannot serve: a project that does not build is listed with
// its compiler error while the working agent serves; fixing the file (under --reload)
// clears it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT, binary, launchBrowser, shot, startServer, stopServer, watch } from '../harness.mjs';

let tmp; let srv; let browser; let broken;

const goMain = (body) => `package main\n\nimport "github.com/agentengine/agentengine/pluginsdk"\n\nimport "github.com/agentengine/agentengine/internal/echoagent"\n\nfunc main() { ${body} }\n`;

before(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'agentengine-web-problems-'));
  // A Go runner inside this module (so it builds offline), in a folder of its own.
  broken = mkdtempSync(join(ROOT, 'web', 'e2e', 'broken-'));
  writeFileSync(join(broken, 'agentengine.yaml'), 'name: broken\nframework: go\n');
  writeFileSync(join(broken, 'main.go'), goMain('notDefinedAnywhere(); pluginsdk.Serve(echoagent.New())'));
  srv = await startServer(binary(tmp), ['examples/echo-go', broken], ['--reload']);
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await stopServer(srv);
  if (broken) rmSync(broken, { recursive: true, force: true });
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('an agent that does not build is shown with its error until a save fixes it', { timeout: 180_000 }, async () => {
  const page = await browser.context.newPage();
  page.setDefaultTimeout(20_000);
  const problems = watch(page);
  await page.goto(srv.url + '/');
  await page.waitForSelector('body[data-ready="true"]');
  const banner = page.locator('#agent-problems');
  await banner.waitFor({ state: 'visible' });
  const text = await banner.textContent();
  assert.match(text, /broken is unavailable/);
  assert.match(text, /undefined: notDefinedAnywhere/);
  // The agent picker offers only the agent that serves.
  assert.deepEqual(await page.locator('#agent option').evaluateAll((os) => os.map((o) => o.value)), ['echo-go']);
  await shot(page, 'agent-problems');

  writeFileSync(join(broken, 'main.go'), goMain('pluginsdk.Serve(echoagent.New())'));
  await banner.waitFor({ state: 'hidden', timeout: 150_000 });
  assert.deepEqual(problems, []);
});
