// DOM helpers. Every value from the API reaches the page as text (textContent / text nodes), never as HTML:
// subscriber response bodies and payloads are arbitrary bytes from outside. The Content-Security-Policy forbids
// inline script as well.

/**
 * @typedef {string | number | boolean | null | undefined | EventListener} Prop an attribute, or an `on…` listener
 * @typedef {Node | string | null | undefined | false} Child text or an element; nothing for null, undefined, false
 */

/**
 * The page's element that `selector` names, of the kind it is used as: a miss or another kind is a bug of the page,
 * thrown here with the selector rather than as a TypeError further on.
 * @overload
 * @param {string} selector
 * @returns {HTMLElement}
 */
/**
 * @template {Element} T
 * @overload
 * @param {string} selector
 * @param {abstract new () => T} kind
 * @param {ParentNode} [root]
 * @returns {T}
 */
/**
 * @param {string} selector
 * @param {abstract new () => Element} [kind]
 * @param {ParentNode} [root]
 */
export function $(selector, kind = HTMLElement, root = document) {
  const element = root.querySelector(selector);
  if (!(element instanceof kind)) throw new Error(`The page has no ${kind.name} ${selector}`);
  return element;
}

/**
 * An element; strings among the children become text nodes, so nothing is ever parsed as HTML.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, Prop>} [props]
 * @param {...(Child | Child[])} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') element.className = String(value);
    else if (key.startsWith('on')) element.addEventListener(key.slice(2), /** @type {EventListener} */ (value));
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/**
 * The inputs `selector` finds below `root` (a form's checkboxes, say).
 * @param {ParentNode} root
 * @param {string} selector
 */
export const inputs = (root, selector) => Array.from(root.querySelectorAll(selector)).filter((element) => element instanceof HTMLInputElement);

export const dash = () => h('span', { class: 'muted' }, '–');

/** @type {number | undefined} */
let flashTimer;

/**
 * The message under the top bar; a success goes away by itself.
 * @param {'success' | 'error'} kind
 * @param {string} message
 */
export function showFlash(kind, message) {
  const flash = $('#flash');
  flash.className = `flash ${kind}`;
  flash.textContent = message;
  flash.hidden = false;
  clearTimeout(flashTimer);
  if (kind === 'success') flashTimer = setTimeout(() => (flash.hidden = true), 6_000);
}

/**
 * A form's error line: shows the message, or hides the line when it is empty.
 * @param {string} selector
 * @param {string} message
 */
export function showFormError(selector, message) {
  const error = $(selector);
  error.textContent = message;
  error.hidden = !message;
}
