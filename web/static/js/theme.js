// Light/dark theme: follows prefers-color-scheme until the user picks one (kept in localStorage).
import { svg } from './icons.js';

const KEY = 'agentengine.theme';

function systemDark() {
  return window.matchMedia?.('(prefers-color-scheme: dark)').matches;
}

export function currentTheme() {
  return document.documentElement.dataset.theme || (systemDark() ? 'dark' : 'light');
}

export function initTheme(button) {
  const saved = localStorage.getItem(KEY);
  if (saved === 'light' || saved === 'dark') document.documentElement.dataset.theme = saved;
  const label = () => {
    const dark = currentTheme() === 'dark';
    button.setAttribute('aria-pressed', String(dark));
    button.replaceChildren(svg(dark ? 'sun' : 'moon'));
    button.setAttribute('aria-label', dark ? 'Switch to light theme' : 'Switch to dark theme');
  };
  button.addEventListener('click', () => {
    const next = currentTheme() === 'dark' ? 'light' : 'dark';
    document.documentElement.dataset.theme = next;
    localStorage.setItem(KEY, next);
    label();
  });
  label();
}
