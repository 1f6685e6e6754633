// DOM helpers. Every value from the API reaches the page as text (textContent / text nodes), never as HTML:
// subscriber response bodies and payloads are arbitrary bytes from outside. The Content-Security-Policy forbids
// inline script as well.

export const $ = (selector, root = document) => root.querySelector(selector);

/** An element; strings among the children become text nodes, so nothing is ever parsed as HTML. */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') element.className = value;
    else if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

export const dash = () => h('span', { class: 'muted' }, '–');

let flashTimer = null;

/** The message under the top bar; a success goes away by itself. */
export function showFlash(kind, message) {
  const flash = $('#flash');
  flash.className = `flash ${kind}`;
  flash.textContent = message;
  flash.hidden = false;
  clearTimeout(flashTimer);
  if (kind === 'success') flashTimer = setTimeout(() => (flash.hidden = true), 6_000);
}

/** A form's error line: shows the message, or hides the line when it is empty. */
export function showFormError(selector, message) {
  const error = $(selector);
  error.textContent = message;
  error.hidden = !message;
}
