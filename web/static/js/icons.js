// The UI's icons: line drawings in SVG (24×24, stroked in the text colour), so they show
// the same everywhere; emoji and symbol glyphs render as empty boxes where no font has
// them. Each icon is a list of path data for dom.js's icon().
import { icon } from './dom.js';

const PATHS = {
  attach: ['M20 11l-8.5 8.5a5 5 0 0 1-7-7L13 4a3.5 3.5 0 0 1 5 5l-8.5 8.5a2 2 0 0 1-3-3L14 7'],
  agent: ['M5 8h14v11H5z', 'M12 8V4', 'M12 4h.01', 'M9 13h.01', 'M15 13h.01', 'M9.5 16h5', 'M2 12v3', 'M22 12v3'],
  alert: ['M12 3l10 18H2z', 'M12 10v5', 'M12 18h.01'],
  close: ['M6 6l12 12', 'M18 6L6 18'],
  download: ['M12 4v11', 'M7 10l5 5 5-5', 'M5 20h14'],
  edit: ['M4 20l1-4L16 5l3 3L8 19z', 'M14 7l3 3'],
  events: ['M9 6h11', 'M9 12h11', 'M9 18h11', 'M4 6h.01', 'M4 12h.01', 'M4 18h.01'],
  file: ['M6 3h8l4 4v14H6z', 'M14 3v4h4'],
  folder: ['M3 6h6l2 2h10v11H3z'],
  menu: ['M4 6h16', 'M4 12h16', 'M4 18h16'],
  moon: ['M20 14A8 8 0 1 1 10 4a6 6 0 0 0 10 10z'],
  sun: ['M12 8a4 4 0 1 0 0 8a4 4 0 1 0 0-8z', 'M12 2v2', 'M12 20v2', 'M2 12h2', 'M20 12h2',
    'M4.9 4.9l1.4 1.4', 'M17.7 17.7l1.4 1.4', 'M4.9 19.1l1.4-1.4', 'M17.7 6.3l1.4-1.4'],
  thumbUp: ['M7 10v10H4V10z', 'M7 10l4-7c1.5 0 2.5 1 2 3l-1 3h6a2 2 0 0 1 2 2.3l-1.2 7A2 2 0 0 1 16.8 20H7'],
  thumbDown: ['M7 14V4H4v10z', 'M7 14l4 7c1.5 0 2.5-1 2-3l-1-3h6a2 2 0 0 0 2-2.3l-1.2-7A2 2 0 0 0 16.8 4H7'],
  trace: ['M3 5h9', 'M7 10h11', 'M10 15h6', 'M5 20h16'],
  tool: ['M15 4a5 5 0 0 0-4.6 6.6L4 17l3 3 6.4-6.4A5 5 0 0 0 20 9l-3 3-3-3 3-3a5 5 0 0 0-2-2z'],
  trash: ['M4 7h16', 'M9 7V4h6v3', 'M6 7l1 13h10l1-13', 'M10 11v6', 'M14 11v6'],
};

/** svg returns a new element of the named icon (aria-hidden: label its control). */
export function svg(name) {
  const el = icon(PATHS[name]);
  el.dataset.icon = name;
  return el;
}

/** fillIcons replaces every <i data-icon="name"> placeholder under root with its icon. */
export function fillIcons(root = document) {
  for (const el of root.querySelectorAll('i[data-icon]')) el.replaceWith(svg(el.dataset.icon));
}
