// Log in with an API token (docs/api.md "Authentication and roles"). The token is checked with
// GET /v1/whoami and kept in this tab's sessionStorage only.

import { ApiError } from '../api.js';
import { h } from '../dom.js';

export default {
  title: () => 'Log in',
  async render(ctx) {
    const error = h('p', { id: 'token-error', class: 'field-error', 'aria-live': 'assertive' });
    const input = h('input', {
      id: 'token', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false',
      required: true, 'aria-describedby': 'token-help token-error', placeholder: 'gpu_… / gpo_… / gpa_…',
    });
    const button = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Log in');
    const form = h('form', { class: 'login-form', novalidate: true },
      h('div', { class: 'field' },
        h('label', { for: 'token' }, 'API token'),
        input,
        h('p', { id: 'token-help', class: 'help' },
          'An admin, operator or user token. A user sees only its own tenant. ',
          'Administrators make tokens with ', h('code', null, 'gpupool token create'),
          '; the first admin token is in ', h('code', null, 'DATA_DIR/admin.token'), '.'),
        error),
      button);
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      const token = input.value.trim();
      error.textContent = '';
      input.removeAttribute('aria-invalid');
      if (!token) {
        error.textContent = 'Enter a token.';
        input.setAttribute('aria-invalid', 'true');
        input.focus();
        return;
      }
      button.disabled = true;
      try {
        const who = await ctx.login(token);
        const next = sessionStorage.getItem('gpupool.next');
        sessionStorage.removeItem('gpupool.next');
        ctx.announce(`Logged in as ${who.token}`);
        ctx.go(next && !next.startsWith('#/login') ? next : '#/overview', { replace: true });
      } catch (err) {
        error.textContent = err instanceof ApiError && err.status === 401
          ? 'This token is not valid: unknown, expired or revoked.' : err.message;
        input.setAttribute('aria-invalid', 'true');
        input.focus();
      } finally {
        button.disabled = false;
      }
    });
    ctx.root.append(h('div', { class: 'login' },
      h('h1', null, h('img', { src: 'favicon.svg', alt: '', width: 40, height: 40 }), ' gpupool'),
      h('p', { class: 'lead' }, 'Log in to the GPU pool dashboard.'),
      form));
    input.focus();
  },
};
