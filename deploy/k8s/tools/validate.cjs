#!/usr/bin/env node
// Checks rendered Kubernetes manifests (multi-document YAML files) offline:
//  1. every object against the Kubernetes API schema of its kind
//     (kubernetes-models' validators: types, required fields, enums, formats);
//  2. no field the API does not have (the schema alone allows unknown
//     fields, which the API server drops silently or, with strict field
//     validation, refuses): each object is walked along the field lists of
//     kubernetes-models' type declarations.
// Prints every problem as FILE: KIND/NAME: PATH: MESSAGE; exits 1 if any.
// Usage: node validate.cjs RENDERED.yaml...
"use strict";
const fs = require("fs");
const path = require("path");
const YAML = require("yaml");

const modelsDir = path.dirname(require.resolve("kubernetes-models/package.json"));
const nodeModules = path.dirname(modelsDir);

// apiVersion -> folder of kubernetes-models ("apps/v1" -> apps/v1, "v1" -> v1).
function modelFolder(apiVersion) {
  return path.join(modelsDir, apiVersion);
}

// ---- field lists from the .d.ts declarations ------------------------------
const interfaceCache = new Map();

// Returns {fields: Map(name -> typeText), imports: Map(id -> file)} of the
// first interface declared in `file`, or null when it declares none (a type
// alias such as Quantity or IntOrString: a leaf).
function readInterface(file) {
  if (interfaceCache.has(file)) return interfaceCache.get(file);
  let result = null;
  if (fs.existsSync(file)) {
    const text = fs.readFileSync(file, "utf8").replace(/\/\*\*[\s\S]*?\*\//g, "");
    const imports = new Map();
    for (const m of text.matchAll(/import \{ ([^}]+) \} from "([^"]+)";/g)) {
      const base = m[2].startsWith(".") ? path.join(path.dirname(file), m[2])
                                        : path.join(nodeModules, m[2]);
      for (const id of m[1].split(",")) imports.set(id.trim(), base + ".d.ts");
    }
    const start = text.search(/export interface \w+[^{]*\{/);
    if (start >= 0) {
      let i = text.indexOf("{", start) + 1;
      const fields = new Map();
      let indexSignature = false;
      while (i < text.length) {
        const rest = text.slice(i);
        const m = rest.match(/^\s*"([^"]+)"\??:\s*/);
        if (!m) {
          const close = rest.match(/^\s*\}/);
          if (close) break;
          if (/^\s*\[key: string\]/.test(rest)) indexSignature = true;
          const semi = rest.indexOf(";");
          if (semi < 0) break;
          i += semi + 1;
          continue;
        }
        i += m[0].length;
        let depth = 0, j = i;
        for (; j < text.length; j++) {
          const c = text[j];
          if (c === "{" || c === "<" || c === "(") depth++;
          else if (c === "}" || c === ">" || c === ")") depth--;
          else if (c === ";" && depth === 0) break;
        }
        fields.set(m[1], text.slice(i, j).trim());
        i = j + 1;
      }
      result = indexSignature && fields.size === 0 ? null : { fields, imports };
    }
  }
  interfaceCache.set(file, result);
  return result;
}

// Walks `value` along `typeText` (declared in an interface with `imports`).
function walk(value, typeText, imports, where, problems) {
  if (value === null || typeof value !== "object") return;
  const t = typeText.replace(/\s+/g, " ").trim();
  let m;
  if ((m = t.match(/^Array<(.+)>$/))) {
    if (Array.isArray(value)) value.forEach((v, k) => walk(v, m[1], imports, `${where}[${k}]`, problems));
    return;
  }
  if ((m = t.match(/^\{ \[key: string\]: (.+?);? \}$/))) {
    for (const [k, v] of Object.entries(value)) walk(v, m[1], imports, `${where}.${k}`, problems);
    return;
  }
  if (/^\w+$/.test(t) && imports.has(t)) {
    checkObject(value, imports.get(t), where, problems);
  }
}

function checkObject(obj, file, where, problems) {
  const decl = readInterface(file);
  if (!decl || Array.isArray(obj)) return;
  for (const [key, v] of Object.entries(obj)) {
    if (!decl.fields.has(key)) {
      problems.push(`${where}: unknown field "${key}" (allowed: ${[...decl.fields.keys()].join(", ")})`);
      continue;
    }
    walk(v, decl.fields.get(key), decl.imports, `${where}.${key}`, problems);
  }
}

// ---- main ------------------------------------------------------------------
function validateObject(obj) {
  const problems = [];
  if (!obj || typeof obj !== "object" || !obj.apiVersion || !obj.kind) {
    return ["not a Kubernetes object (apiVersion and kind are required)"];
  }
  const folder = modelFolder(obj.apiVersion);
  const declFile = path.join(folder, `${obj.kind}.d.ts`);
  if (!fs.existsSync(declFile)) return [`unknown kind ${obj.apiVersion}/${obj.kind}`];
  const Model = require(folder)[obj.kind];
  if (typeof Model !== "function") return [`no model for ${obj.apiVersion}/${obj.kind}`];
  try {
    new Model(obj).validate();
  } catch (e) {
    for (const err of e.errors || [e]) {
      problems.push(`${err.instancePath || ""}: ${err.message || String(err)}` +
                    (err.params ? ` ${JSON.stringify(err.params)}` : ""));
    }
  }
  checkObject(obj, declFile, "", problems);
  return problems;
}

function main(files) {
  if (files.length === 0) {
    console.error("usage: node validate.cjs RENDERED.yaml...");
    return 2;
  }
  let bad = 0, count = 0;
  for (const file of files) {
    const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
    for (const doc of docs) {
      if (doc.errors.length) {
        console.log(`${file}: YAML: ${doc.errors.map(String).join("; ")}`);
        bad++;
        continue;
      }
      const obj = doc.toJS();
      if (obj === null) continue;
      count++;
      const name = `${obj.kind}/${obj.metadata && obj.metadata.name}`;
      for (const p of validateObject(obj)) {
        console.log(`${file}: ${name}: ${p}`);
        bad++;
      }
    }
  }
  const version = require("kubernetes-models/package.json").version;
  console.log(`${count} objects checked against kubernetes-models ${version}: ${bad} problems`);
  return bad === 0 && count > 0 ? 0 : 1;
}

process.exitCode = main(process.argv.slice(2));
