// Check kiln's /api/v1/openapi.json with real validators: the document with
// @apidevtools/swagger-parser (the OpenAPI 3.0 schema and its $refs), and every response
// the integration tests saw against the schema the document gives for it, with Ajv.
// usage: node openapi.mjs DOC.json [SAMPLES.json]
// SAMPLES.json: [{"method": "get", "path": "/api/v1/jobs/{id}", "status": 200, "body": ...}]
// Prints one JSON line {"checked": N, "errors": [...]}; exits 1 when anything is wrong.
import { readFileSync } from "node:fs";
import SwaggerParser from "@apidevtools/swagger-parser";
import Ajv from "ajv";

const doc = JSON.parse(readFileSync(process.argv[2], "utf8"));
const samples = process.argv[3] ? JSON.parse(readFileSync(process.argv[3], "utf8")) : [];
const errors = [];

try {
  await SwaggerParser.validate(structuredClone(doc));
} catch (e) {
  errors.push(`document: ${e.message}`);
}

const deref = await SwaggerParser.dereference(structuredClone(doc));
// OpenAPI 3.0 schema objects: `nullable` is theirs, `example` and `description` are notes
const ajv = new Ajv({ strict: false, allErrors: true });
let checked = 0;
for (const s of samples) {
  const op = deref.paths[s.path]?.[s.method];
  const where = `${s.method.toUpperCase()} ${s.path} ${s.status}`;
  if (!op) {
    errors.push(`${where}: not in the document`);
    continue;
  }
  const resp = op.responses[String(s.status)] ?? op.responses.default;
  if (!resp) {
    errors.push(`${where}: the document has no such response`);
    continue;
  }
  const schema = resp.content?.["application/json"]?.schema;
  if (!schema) {
    errors.push(`${where}: the document gives no JSON schema`);
    continue;
  }
  const validate = ajv.compile(schema);
  checked++;
  if (!validate(s.body))
    errors.push(`${where}: ${ajv.errorsText(validate.errors)}`);
}
console.log(JSON.stringify({ checked, errors }));
process.exit(errors.length ? 1 : 0);
