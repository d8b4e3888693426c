// GitHub's own REST description (@octokit/openapi, pinned in package-lock.json: api.github.com.json,
// OpenAPI 3.0.3) as a router and a validator of requests and responses. The validator knows the
// keywords GitHub's description uses: $ref, type, nullable, enum, properties, required,
// additionalProperties, items, allOf, anyOf, oneOf (taken as anyOf: GitHub's branches overlap),
// minimum/maximum, minLength/maxLength, minItems/maxItems and the date-time format.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function specPath() {
  return require.resolve('@octokit/openapi/generated/api.github.com.json');
}

let cached = null;
export function loadSpec() {
  if (!cached) cached = new OpenApi(JSON.parse(readFileSync(specPath(), 'utf8')));
  return cached;
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$/;

export class OpenApi {
  constructor(doc) {
    this.doc = doc;
    this.version = doc.info.version;
    this.refs = new Map();   // "$ref" → the node it names
    // method + number of segments → [{regex, names, literals, template, op}]
    this.routes = new Map();
    for (const [template, item] of Object.entries(doc.paths)) {
      const segments = template.split('/').slice(1);
      const names = [];
      const pattern = segments.map((s) => {
        const m = /^\{(.+)\}$/.exec(s);
        if (m) { names.push(m[1]); return '([^/]+)'; }
        return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      });
      const literals = segments.length - names.length;
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        if (!item[method]) continue;
        const key = `${method} ${segments.length}`;
        if (!this.routes.has(key)) this.routes.set(key, []);
        this.routes.get(key).push({
          regex: new RegExp(`^/${pattern.join('/')}$`), names, literals, template,
          op: item[method], shared: item.parameters || [],
        });
      }
    }
    for (const list of this.routes.values()) list.sort((a, b) => b.literals - a.literals);
  }

  resolve(node) {
    if (!node || !node.$ref) return node;
    const hit = this.refs.get(node.$ref);
    if (hit) return hit;
    let n = node;
    for (let hops = 0; n && n.$ref; hops++) {
      if (hops > 20) throw new Error(`$ref loop at ${node.$ref}`);
      n = n.$ref.slice(2).split('/').reduce((o, k) => o[k.replace(/~1/g, '/').replace(/~0/g, '~')], this.doc);
    }
    this.refs.set(node.$ref, n);
    return n;
  }

  // The operation a request path names, or null.
  route(method, path) {
    const segments = path.split('/').length - 1;
    for (const r of this.routes.get(`${method.toLowerCase()} ${segments}`) || []) {
      const m = r.regex.exec(path);
      if (!m) continue;
      const params = {};
      r.names.forEach((n, i) => { params[n] = decodeURIComponent(m[i + 1]); });
      return { template: r.template, op: r.op, params, shared: r.shared };
    }
    return null;
  }

  // Errors of a request against its operation: path and query parameters, JSON body.
  validateRequest(route, query, body) {
    const errors = [];
    const params = [...route.shared, ...(route.op.parameters || [])].map((p) => this.resolve(p));
    for (const p of params) {
      if (p.in !== 'path' && p.in !== 'query') continue;
      const raw = p.in === 'path' ? route.params[p.name] : query.get(p.name);
      if (raw === null || raw === undefined) {
        if (p.required) errors.push(`${p.in} parameter ${p.name}: missing`);
        continue;
      }
      const schema = this.resolve(p.schema || {});
      const value = coerce(raw, schema);
      if (value === undefined) {
        errors.push(`${p.in} parameter ${p.name}: "${raw}" is not ${schema.type}`);
        continue;
      }
      this.check(schema, value, `${p.in} parameter ${p.name}`, errors);
    }
    const rb = route.op.requestBody && this.resolve(route.op.requestBody);
    if (rb) {
      const media = rb.content && rb.content['application/json'];
      if (body === undefined) {
        if (rb.required) errors.push('body: missing');
      } else if (media && media.schema) {
        this.check(media.schema, body, 'body', errors);
      }
    } else if (body !== undefined) {
      errors.push('body: the operation takes none');
    }
    return errors;
  }

  // Errors of a response: its status must be documented (or be an error in GitHub's general shape,
  // which any endpoint may answer: 401, 403, 429, 5xx), its JSON body must match.
  validateResponse(route, status, body, headers = {}) {
    const errors = [];
    const responses = route.op.responses || {};
    const documented = responses[String(status)] || responses.default;
    // The headers documented for this answer: present when required, of their type when sent.
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    for (const [name, h] of Object.entries((documented && this.resolve(documented).headers) || {})) {
      const header = this.resolve(h);
      const value = lower[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) errors.push(`header ${name}: missing`);
        continue;
      }
      const schema = this.resolve(header.schema || {});
      const typed = coerce(String(value), schema);
      if (typed === undefined) errors.push(`header ${name}: "${value}" is not ${schema.type}`);
      else this.check(schema, typed, `header ${name}`, errors);
    }
    if (status === 304 || status === 204) {
      if (body !== undefined) errors.push(`status ${status}: a body`);
      return errors;
    }
    if (!documented) {
      if (status >= 400) {
        this.check({ $ref: '#/components/schemas/basic-error' }, body, 'body', errors);
      } else {
        errors.push(`status ${status}: not documented for ${route.template}`);
      }
      return errors;
    }
    const r = this.resolve(documented);
    const media = r.content && (r.content['application/json'] || r.content['application/scim+json']);
    if (media && media.schema) this.check(media.schema, body, 'body', errors);
    else if (body !== undefined && status < 400) errors.push(`status ${status}: a body where none is documented`);
    return errors;
  }

  // Validates `value` against `schema`, pushing "where: what" strings to errors; returns whether it
  // matched.
  check(schemaNode, value, where, errors, depth = 0) {
    const before = errors.length;
    const schema = this.resolve(schemaNode);
    if (!schema || depth > 64) return true;
    if (value === null) {
      if (schema.nullable) return true;
      if (schema.allOf && schema.allOf.some((s) => this.resolve(s).nullable)) return true;
      const alts = schema.oneOf || schema.anyOf;
      if (alts && alts.some((s) => this.resolve(s).nullable)) return true;
      if (!schema.type && !schema.allOf && !alts && !schema.properties && !schema.enum) return true;
      errors.push(`${where}: null where ${schema.type || 'a value'} is required`);
      return false;
    }
    if (schema.allOf) for (const s of schema.allOf) this.check(s, value, where, errors, depth + 1);
    const alts = schema.oneOf || schema.anyOf;
    if (alts) {
      const matched = alts.some((s) => this.check(s, value, where, [], depth + 1));
      if (!matched) {
        const first = [];
        this.check(alts[0], value, where, first, depth + 1);
        errors.push(`${where}: matches none of ${alts.length} alternatives (first: ${first[0] || '?'})`);
      }
    }
    if (schema.type && !hasType(value, schema.type)) {
      errors.push(`${where}: ${JSON.stringify(value)?.slice(0, 60)} is not ${schema.type}`);
      return false;
    }
    if (schema.enum && !schema.enum.includes(value)) {
      errors.push(`${where}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
    }
    if (typeof value === 'string') {
      if (schema.format === 'date-time' && !DATE_TIME.test(value)) errors.push(`${where}: "${value}" is not a date-time`);
      if (schema.minLength !== undefined && value.length < schema.minLength) errors.push(`${where}: shorter than ${schema.minLength}`);
      if (schema.maxLength !== undefined && value.length > schema.maxLength) errors.push(`${where}: longer than ${schema.maxLength}`);
    }
    if (typeof value === 'number') {
      if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${where}: below ${schema.minimum}`);
      if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${where}: above ${schema.maximum}`);
    }
    if (Array.isArray(value)) {
      if (schema.minItems !== undefined && value.length < schema.minItems) errors.push(`${where}: fewer than ${schema.minItems} items`);
      if (schema.maxItems !== undefined && value.length > schema.maxItems) errors.push(`${where}: more than ${schema.maxItems} items`);
      if (schema.items) value.forEach((v, i) => this.check(schema.items, v, `${where}[${i}]`, errors, depth + 1));
    } else if (typeof value === 'object') {
      for (const k of schema.required || []) {
        if (!(k in value)) errors.push(`${where}: missing required ${k}`);
      }
      const props = schema.properties || {};
      for (const [k, v] of Object.entries(value)) {
        if (props[k]) this.check(props[k], v, `${where}.${k}`, errors, depth + 1);
        else if (schema.additionalProperties === false) errors.push(`${where}: unexpected property ${k}`);
        else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
          this.check(schema.additionalProperties, v, `${where}.${k}`, errors, depth + 1);
        }
      }
    }
    return errors.length === before;
  }
}

function hasType(value, type) {
  switch (type) {
    case 'string': return typeof value === 'string';
    case 'integer': return Number.isInteger(value);
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'boolean': return typeof value === 'boolean';
    case 'array': return Array.isArray(value);
    case 'object': return typeof value === 'object' && value !== null && !Array.isArray(value);
    default: return true;
  }
}

// A query or path parameter's text as its schema's type; undefined when it cannot be one.
function coerce(raw, schema) {
  switch (schema.type) {
    case 'integer': return /^-?\d+$/.test(raw) ? Number(raw) : undefined;
    case 'number': return raw !== '' && Number.isFinite(Number(raw)) ? Number(raw) : undefined;
    case 'boolean': return raw === 'true' ? true : raw === 'false' ? false : undefined;
    case 'array': return raw.split(',');
    default: return raw;
  }
}
