// Starts Swagger UI (served beside this file from swagger-ui-dist) on the OpenAPI document the API put in the page as
// a JSON data block: /docs has no inline script, so its Content-Security-Policy allows only this origin's files.
const documentBlock = document.getElementById('openapi-document')
window.SwaggerUIBundle({
  spec: JSON.parse(documentBlock.textContent),
  domNode: document.getElementById('reference'),
  deepLinking: true,
  // Swagger UI would otherwise ask validator.swagger.io about the document: no request leaves this origin.
  validatorUrl: null,
})
