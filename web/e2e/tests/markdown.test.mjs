// Unit tests of the safe Markdown renderer (no browser needed: the module is plain ES).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderMarkdown, escapeHtml } from '../../static/js/markdown.js';

test('escapes HTML before any formatting', () => {
  const out = renderMarkdown('<img src=x onerror=alert(1)> **<b>hi</b>**');
  assert.ok(!out.includes('<img'), out);
  assert.ok(out.includes('&lt;img src=x onerror=alert(1)&gt;'), out);
  assert.ok(out.includes('<strong>&lt;b&gt;hi&lt;/b&gt;</strong>'), out);
});

test('code fences and inline code keep their text verbatim', () => {
  const out = renderMarkdown('before\n```js\nconst a = "<x>" && b;\n```\nuse `**not bold**`');
  assert.ok(out.includes('<pre><code class="language-js">const a = &quot;&lt;x&gt;&quot; &amp;&amp; b;</code></pre>'), out);
  assert.ok(out.includes('<code>**not bold**</code>'), out);
});

test('an unterminated fence while streaming renders as code', () => {
  assert.ok(renderMarkdown('```\npartial <code>').includes('<pre><code>partial &lt;code&gt;</code></pre>'));
});

test('links: only safe schemes, with rel=noopener', () => {
  const ok = renderMarkdown('[docs](https://example.com/a?b=1&c=2)');
  assert.ok(ok.includes('<a href="https://example.com/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">docs</a>'), ok);
  const bad = renderMarkdown('[x](javascript:alert(1)) [y](data:text/html,hi)');
  assert.ok(!bad.includes('<a'), bad);
  const quote = renderMarkdown('[x](https://e.com/"onmouseover="alert(1))');
  assert.ok(!/href="[^"]*"onmouseover/.test(quote), quote);
});

test('lists, emphasis, headings and paragraphs', () => {
  const out = renderMarkdown('# Title\n\n- one\n- *two*\n\n1. a\n2. b\n\nplain _text_');
  assert.ok(out.includes('<h3>Title</h3>'), out);
  assert.ok(out.includes('<ul><li>one</li><li><em>two</em></li></ul>'), out);
  assert.ok(out.includes('<ol><li>a</li><li>b</li></ol>'), out);
  assert.ok(out.includes('<p>plain <em>text</em></p>'), out);
  assert.equal(escapeHtml(`'"`), '&#39;&quot;');
});
