// Validates Kubernetes manifests offline, twice over, against the Kubernetes OpenAPI models that
// the npm package kubernetes-models bundles:
//  1. schema: each document through its model's validate() (the OpenAPI schema compiled with
//     ajv: required fields, types, formats, enums, int-or-string);
//  2. no unknown field: each document as a TypeScript object literal typed with the model's
//     interface, compiled with tsc --strict, whose excess-property check rejects a field the API
//     does not have (the schema alone allows them, as the API server's non-strict decoding does).
// Usage: node validate_manifests.js FILE.yaml...   (exit 0 all valid, 1 otherwise)
//        node validate_manifests.js --self-test   (known-bad documents must be rejected)
"use strict";

const fs = require("fs");
const os = require("os");
const path = require("path");
const YAML = require("yaml");
const ts = require("typescript");

function modelPath(doc) {
  return `kubernetes-models/${doc.apiVersion}/${doc.kind}`;
}

function schemaErrors(doc) {
  let Model;
  try {
    Model = require(modelPath(doc))[doc.kind];
  } catch (error) {
    return [`no model for apiVersion ${doc.apiVersion} kind ${doc.kind}`];
  }
  try {
    new Model(doc).validate();
    return [];
  } catch (error) {
    return [String(error.message)];
  }
}

// One TypeScript program for all documents: a compile per document would take minutes.
function typeErrors(entries) {
  if (entries.length === 0) {
    return new Map();
  }
  const dir = fs.mkdtempSync(path.join(__dirname, ".tscheck-"));
  const files = [];
  entries.forEach((entry, index) => {
    const file = path.join(dir, `doc${index}.ts`);
    const source =
      `import type { I${entry.doc.kind} } from "${modelPath(entry.doc)}";\n` +
      `export const manifest: I${entry.doc.kind} = ${JSON.stringify(entry.doc, null, 2)};\n`;
    fs.writeFileSync(file, source);
    files.push(file);
  });
  const program = ts.createProgram(files, {
    strict: true, noEmit: true, skipLibCheck: true, types: [],
    module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10, target: ts.ScriptTarget.ES2020,
  });
  const errors = new Map();
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const index = diagnostic.file ? files.indexOf(diagnostic.file.fileName) : -1;
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, " ");
    const key = index >= 0 ? index : -1;
    if (!errors.has(key)) errors.set(key, []);
    errors.get(key).push(message);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return errors;
}

// Every document of every file: [{label, doc}]; parse problems go to `problems`.
function readDocuments(files, problems) {
  const entries = [];
  for (const file of files) {
    const text = fs.readFileSync(file, "utf8");
    const docs = YAML.parseAllDocuments(text, { uniqueKeys: true, strict: true });
    docs.forEach((document, index) => {
      const label = `${file} document ${index + 1}`;
      if (document.errors.length > 0 || document.warnings.length > 0) {
        problems.push(`${label}: YAML: ${[...document.errors, ...document.warnings].map((e) => e.message).join("; ")}`);
        return;
      }
      const doc = document.toJS();
      if (doc === null || typeof doc !== "object" || !doc.apiVersion || !doc.kind) {
        problems.push(`${label}: not a Kubernetes object (apiVersion and kind)`);
        return;
      }
      entries.push({ label: `${label} (${doc.kind} ${doc.metadata && doc.metadata.name})`, doc });
    });
  }
  return entries;
}

function validate(files, quiet) {
  const problems = [];
  const entries = readDocuments(files, problems);
  const typed = typeErrors(entries);
  entries.forEach((entry, index) => {
    const errors = [...schemaErrors(entry.doc), ...(typed.get(index) || [])];
    for (const error of errors) problems.push(`${entry.label}: ${error}`);
    if (errors.length === 0 && !quiet) console.log(`ok: ${entry.label}`);
  });
  for (const error of typed.get(-1) || []) problems.push(`typescript: ${error}`);
  return { problems, documents: entries.length };
}

function selfTest() {
  const good = {
    apiVersion: "batch/v1", kind: "Job", metadata: { name: "x" },
    spec: { template: { spec: { restartPolicy: "Never", containers: [{ name: "c", image: "i",
      resources: { limits: { "nvidia.com/gpu": 1 } } }] } } },
  };
  const bad = [
    ["unknown field", (d) => { d.spec.template.spec.containers[0].gpus = 1; }],
    ["wrong type", (d) => { d.spec.completions = "two"; }],
    ["missing required field", (d) => { delete d.spec.template.spec.containers[0].name; }],
    ["quantity not a quantity", (d) => { d.spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"] = true; }],
  ];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "gpusel-k8s-selftest-"));
  let failed = 0;
  const write = (name, doc) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, YAML.stringify(doc));
    return file;
  };
  if (validate([write("good.yaml", good)], true).problems.length !== 0) {
    console.log("self-test FAILED: a valid Job was rejected");
    failed++;
  }
  for (const [what, spoil] of bad) {
    const doc = JSON.parse(JSON.stringify(good));
    spoil(doc);
    const result = validate([write("bad.yaml", doc)], true);
    if (result.problems.length === 0) {
      console.log(`self-test FAILED: ${what} was accepted`);
      failed++;
    } else {
      console.log(`self-test ok: ${what} rejected (${result.problems[0].slice(0, 120)})`);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return failed === 0;
}

const args = process.argv.slice(2);
if (args[0] === "--self-test") {
  process.exit(selfTest() ? 0 : 1);
}
const { problems, documents } = validate(args, false);
for (const problem of problems) console.log(`INVALID: ${problem}`);
console.log(`${documents} documents in ${args.length} files: ${problems.length === 0 ? "all valid" : `${problems.length} problems`}`);
process.exit(problems.length === 0 && documents > 0 ? 0 : 1);
