// The page at /: its curl lines name this server as the browser sees it (scheme, host,
// any path prefix), which a TLS-terminating proxy can hide from the server itself.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const base = new URL(".", document.baseURI).href.replace(/\/$/, "");
  for (const node of document.querySelectorAll(".base")) node.textContent = base;
});
