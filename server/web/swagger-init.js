// Starts Swagger UI on this scope's own /openapi.json (named relative to the page by
// the page itself). A file rather than an inline script, so the page's
// Content-Security-Policy can forbid inline scripts.
"use strict";
(function () {
  const root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: new URL(root.dataset.openapiUrl, document.baseURI).href,
    dom_id: "#swagger-ui",
    layout: "BaseLayout",
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  });
})();
