// Run in the report after it loaded: opens every fold, then says what a reader sees.
(() => {
  for (const d of document.querySelectorAll('details')) { d.open = true; }
  const width = window.innerWidth;
  const name = (e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
    (e.className && typeof e.className === 'string' ? '.' + e.className.split(' ').join('.') : '') +
    ' "' + (e.textContent || '').trim().slice(0, 40) + '"';
  const cut = [];   // an element whose content is wider than its box (cut off or scrolled)
  const wide = [];  // an element that reaches past the viewport's edges
  for (const e of document.body.querySelectorAll('*')) {
    const box = e.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) { continue; }  // not rendered
    if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1) { cut.push(name(e)); }
    if (box.right > width + 1 || box.left < -1) { wide.push(name(e)); }
  }
  const text = (selector) => [...document.querySelectorAll(selector)].map((e) => e.innerText);
  const count = (key) => {
    const card = document.getElementById('count-' + key);
    return card ? [card.querySelector('b').innerText, card.getAttribute('href')] : null;
  };
  const tree = [...document.querySelectorAll('ul.tree li')].map((li) => {
    const up = li.parentElement.closest('li');
    return [li.dataset.agent, up ? up.dataset.agent : null];
  });
  const targets = [...document.querySelectorAll('a[href^="#"]')]
    .filter((a) => !document.getElementById(a.getAttribute('href').slice(1)))
    .map((a) => a.getAttribute('href'));
  return {
    width, page: document.documentElement.scrollWidth, title: document.title,
    cut, wide, targets,
    counts: Object.fromEntries(['denied', 'errors', 'calls', 'agents'].map((k) => [k, count(k)])),
    denied: text('#denied li'), errors: text('#errors li'),
    tree, files: text('#files summary'), notes: text('p.dim'),
    code: text('pre.code'), images: document.images.length,
    task: text('#task'), audit: text('#audit'),
  };
})()
