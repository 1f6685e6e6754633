/** The login form the provider shows during an interaction: plain HTML, no script, every value escaped. */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => ESCAPES[character]);

export function loginPage({ action, clientId, username, error }: { action: string; clientId: string; username?: string; error?: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in</title>
<style>body{font-family:system-ui,sans-serif;max-width:22rem;margin:4rem auto;padding:0 1rem}label,input,button{display:block;width:100%;margin:.4rem 0}input,button{padding:.5rem;font-size:1rem}.error{color:#b00020}</style>
</head>
<body>
<h1>Sign in</h1>
<p>to ${escapeHtml(clientId)}</p>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="${escapeHtml(action)}" autocomplete="off">
<label for="username">Username</label>
<input id="username" name="username" required autofocus value="${escapeHtml(username ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" required>
<button type="submit">Sign in</button>
</form>
</body>
</html>
`;
}
