// Interoperability test: the official MCP TypeScript SDK clients against `ct mcp` (stdio) and
// `ct serve` (Streamable HTTP): v1 (@modelcontextprotocol/sdk) with the initialize handshake of
// 2025-11-25, and v2 (@modelcontextprotocol/client) negotiating 2026-07-28, the stateless revision
// (server/discover first, then per-request _meta). Usage: node interop.mjs --ct /path/to/ct
//
// One line per check ("ok   …" or "FAIL …"), then a summary line "N passed, M failed".
// Exit status 0 only when every check passed. Each step is time-boxed so a hang fails.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioClientTransportV2 } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { ctPathFromArgs } from './args.mjs';

const STEP_MS = 15_000;   // one step (request, spawn, shutdown)
const TOTAL_MS = 300_000; // the whole run

// ---------------------------------------------------------------------------------------------
// Arguments and environment

const ct = ctPathFromArgs('interop', process.argv.slice(2));

// The children must not pick up a project or output format from the caller's environment.
const childEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('CLEO_')));

// ---------------------------------------------------------------------------------------------
// Bookkeeping

let passed = 0;
let failed = 0;
const tempDirs = [];
const children = new Set(); // ChildProcess objects we started and must not leave behind

class Abort extends Error {} // a failed step that later steps depend on

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function describe(error) {
  if (error instanceof assert.AssertionError) return error.message.split('\n')[0];
  return error?.message ?? String(error);
}

/// Runs one check; prints its line. A fatal check that fails aborts the current transport.
async function check(name, fn, { fatal = false, diagnostics } = {}) {
  try {
    const value = await withTimeout(Promise.resolve().then(fn), STEP_MS, name);
    passed += 1;
    console.log(`ok   ${name}`);
    return value;
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}: ${describe(error)}`);
    const extra = diagnostics?.();
    if (extra) console.log(extra.replace(/^/gm, '     | '));
    if (fatal) throw new Abort(name);
    return undefined;
  }
}

const requestOptions = { timeout: STEP_MS };

async function makeTempDir(label) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `ct-interop-${label}-`));
  tempDirs.push(dir);
  return dir;
}

function ctInit(dir) {
  const run = spawnSync(ct, ['init'], { cwd: dir, env: childEnv, encoding: 'utf8', timeout: STEP_MS });
  if (run.error) throw run.error;
  assert.equal(run.status, 0, `ct init exited with ${run.status ?? run.signal}: ${run.stderr.trim()}`);
}

function tail(text, lines = 20) {
  return text.trim().split('\n').slice(-lines).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Tool-result helpers

/// The envelope of a tool result, after checking the result's shape: structuredContent is the
/// envelope, content[0].text is the same envelope as JSON, isError mirrors !success.
function envelopeOf(result) {
  assert.ok(result && typeof result === 'object', 'tool result is an object');
  const envelope = result.structuredContent;
  assert.ok(envelope && typeof envelope === 'object', 'structuredContent is an object');
  assert.equal(typeof envelope.success, 'boolean', 'structuredContent.success is a boolean');
  assert.ok(Array.isArray(result.content) && result.content.length >= 1, 'content has an item');
  assert.equal(result.content[0].type, 'text', 'content[0].type');
  assert.deepEqual(JSON.parse(result.content[0].text), envelope, 'content[0].text parses to structuredContent');
  assert.equal(result.isError === true, envelope.success === false, 'isError is true exactly when success is false');
  return envelope;
}

function expectSuccess(result) {
  const envelope = envelopeOf(result);
  assert.equal(envelope.success, true, `expected success, got ${JSON.stringify(envelope.error ?? envelope)}`);
  assert.notEqual(result.isError, true, 'isError');
  return envelope.data;
}

function expectError(result, code) {
  const envelope = envelopeOf(result);
  assert.equal(envelope.success, false, `expected an error, got ${JSON.stringify(envelope)}`);
  assert.equal(result.isError, true, 'isError');
  const error = envelope.error;
  assert.ok(error && typeof error === 'object', 'error is an object');
  assert.equal(error.code, code, 'error.code');
  assert.equal(typeof error.exitCode, 'number', 'error.exitCode is a number');
  assert.ok(typeof error.message === 'string' && error.message.length > 0, 'error.message is a non-empty string');
  return error;
}

const query = (client, operation, params) =>
  client.callTool({ name: 'cleo_query', arguments: { domain: 'tasks', operation, params } }, undefined, requestOptions);
const mutate = (client, operation, params) =>
  client.callTool({ name: 'cleo_mutate', arguments: { domain: 'tasks', operation, params } }, undefined, requestOptions);

// ---------------------------------------------------------------------------------------------
// The checks shared by both transports, on a connected client over an initialised, empty project.

async function sessionChecks(t, client, { stateless = false } = {}) {
  if (stateless) {
    await check(`${t}: the client negotiated 2026-07-28 (stateless), not the handshake`, () => {
      assert.equal(client.getProtocolEra(), 'modern', 'protocol era');
      assert.equal(client.getNegotiatedProtocolVersion(), '2026-07-28', 'negotiated version');
    });
  }
  await check(`${t}: serverVersion is cleo`, () => {
    const info = client.getServerVersion();
    assert.equal(info?.name, 'cleo', 'serverInfo.name');
    assert.ok(typeof info.version === 'string' && info.version.length > 0, 'serverInfo.version is a non-empty string');
  });
  await check(`${t}: capabilities offer tools`, () => {
    assert.ok(client.getServerCapabilities()?.tools, 'capabilities.tools');
  });
  await check(`${t}: instructions name both tools`, () => {
    const text = client.getInstructions();
    assert.equal(typeof text, 'string', 'instructions is a string');
    assert.ok(text.includes('cleo_query') && text.includes('cleo_mutate'), 'instructions mention cleo_query and cleo_mutate');
  });

  await check(`${t}: listTools returns cleo_query and cleo_mutate`, async () => {
    const { tools } = await client.listTools(undefined, requestOptions);
    assert.deepEqual(tools.map((tool) => tool.name).sort(), ['cleo_mutate', 'cleo_query'], 'tool names');
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    assert.equal(byName.cleo_query.annotations?.readOnlyHint, true, 'cleo_query readOnlyHint');
    assert.notEqual(byName.cleo_query.annotations?.destructiveHint, true, 'cleo_query destructiveHint');
    assert.notEqual(byName.cleo_mutate.annotations?.readOnlyHint, true, 'cleo_mutate readOnlyHint (false when unset)');
    assert.equal(byName.cleo_mutate.annotations?.destructiveHint, true, 'cleo_mutate destructiveHint');
    for (const tool of tools) {
      assert.ok(typeof tool.description === 'string' && tool.description.length > 0, `${tool.name} description`);
      const schema = tool.inputSchema;
      assert.equal(schema.type, 'object', `${tool.name} inputSchema.type`);
      assert.ok(schema.properties?.domain?.enum?.includes('tasks'), `${tool.name} domain enum includes tasks`);
      assert.ok(schema.properties?.operation, `${tool.name} has an operation property`);
      assert.ok(schema.properties?.params, `${tool.name} has a params property`);
      assert.deepEqual([...(schema.required ?? [])].sort(), ['domain', 'operation'], `${tool.name} required`);
    }
  });

  await check(`${t}: cleo_mutate tasks.add creates T001`, async () => {
    const data = expectSuccess(await mutate(client, 'add', { title: 'Write docs' }));
    assert.equal(data?.id, 'T001', 'data.id');
  });
  await check(`${t}: cleo_query tasks.show T001`, async () => {
    const data = expectSuccess(await query(client, 'show', { id: 'T001' }));
    assert.equal(data?.id, 'T001', 'data.id');
    assert.equal(data?.title, 'Write docs', 'data.title');
  });
  await check(`${t}: cleo_query tasks.find "docs" finds T001`, async () => {
    const data = expectSuccess(await query(client, 'find', { query: 'docs' }));
    assert.ok(JSON.stringify(data).includes('"T001"'), `T001 in ${JSON.stringify(data)}`);
  });
  await check(`${t}: cleo_mutate tasks.complete T001`, async () => {
    const data = expectSuccess(await mutate(client, 'complete', { id: 'T001' }));
    assert.deepEqual(data, {}, 'data: nothing the call did not say (no task was unblocked)');
  });
  await check(`${t}: cleo_query tasks.show T001 is done`, async () => {
    const data = expectSuccess(await query(client, 'show', { id: 'T001' }));
    assert.equal(data?.status, 'done', 'data.status');
  });
  await check(`${t}: error result: show T999 is E_NOT_FOUND`, async () => {
    expectError(await query(client, 'show', { id: 'T999' }), 'E_NOT_FOUND');
  });
  await check(`${t}: error result: a mutation through cleo_query is E_INVALID_GATEWAY`, async () => {
    expectError(await query(client, 'add', { title: 'Should not exist' }), 'E_INVALID_GATEWAY');
    // …and nothing was created.
    expectError(await query(client, 'show', { id: 'T002' }), 'E_NOT_FOUND');
  });
  if (!stateless) {
    await check(`${t}: ping`, async () => {
      const result = await client.ping(requestOptions);
      assert.deepEqual(result, {}, 'ping result');
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Beyond the tools: prompts, resources, completion, and a subscription told of a change that
// another process (a `ct` command) makes. After sessionChecks: T001 exists (done).

/// The code of a JSON-RPC error the client threw.
const rpcCode = (error) => error?.code;

async function featureChecks(t, client, dir, { v2 = false } = {}) {
  await check(`${t}: capabilities offer prompts, resources (subscribe) and completions`, () => {
    const capabilities = client.getServerCapabilities();
    assert.ok(capabilities?.prompts, 'capabilities.prompts');
    assert.equal(capabilities?.resources?.subscribe, true, 'capabilities.resources.subscribe');
    assert.ok(capabilities?.completions, 'capabilities.completions');
  });
  await check(`${t}: cleo_mutate tasks.add creates T002 (for what follows)`, async () => {
    assert.equal(expectSuccess(await mutate(client, 'add', { title: 'Survey the ledgers' }))?.id, 'T002', 'data.id');
  });
  await check(`${t}: listPrompts: next, take, handoff, decompose, review, spawn, with arguments`, async () => {
    const { prompts } = await client.listPrompts(undefined, requestOptions);
    assert.deepEqual(prompts.map((prompt) => prompt.name), ['next', 'take', 'handoff', 'decompose', 'review', 'spawn']);
    const take = prompts.find((prompt) => prompt.name === 'take');
    assert.deepEqual(take.arguments?.map((a) => [a.name, a.required]), [['id', true]], 'take arguments');
  });
  await check(`${t}: getPrompt take T002 renders the task and the call that claims it`, async () => {
    const { messages } = await client.getPrompt({ name: 'take', arguments: { id: 'T002' } }, requestOptions);
    assert.equal(messages[0].role, 'user', 'role');
    assert.ok(messages[0].content.text.includes('Survey the ledgers'), 'the task is in the text');
    assert.ok(messages[0].content.text.includes('cleo_mutate tasks.start {"id":"T002"}'), 'the claim call');
  });
  await check(`${t}: getPrompt of a task that does not exist is -32602`, async () => {
    await assert.rejects(client.getPrompt({ name: 'take', arguments: { id: 'T404' } }, requestOptions),
                         (error) => rpcCode(error) === -32602);
  });
  await check(`${t}: listResources has the instructions and the open task; templates list task and epic`, async () => {
    const { resources } = await client.listResources(undefined, requestOptions);
    const uris = resources.map((resource) => resource.uri);
    assert.ok(uris.includes('cleo://instructions'), 'cleo://instructions');
    assert.ok(uris.includes('cleo://task/T002'), `cleo://task/T002 in ${uris.join(', ')}`);
    assert.ok(!uris.includes('cleo://task/T001'), 'a done task is not listed');
    const { resourceTemplates } = await client.listResourceTemplates(undefined, requestOptions);
    const templates = resourceTemplates.map((template) => template.uriTemplate);
    assert.ok(templates.includes('cleo://task/{id}') && templates.includes('cleo://epic/{id}'), templates.join(', '));
  });
  await check(`${t}: readResource cleo://task/T002 is tasks.show's record`, async () => {
    const { contents } = await client.readResource({ uri: 'cleo://task/T002' }, requestOptions);
    assert.equal(contents[0].mimeType, 'application/json');
    assert.equal(JSON.parse(contents[0].text).title, 'Survey the ledgers');
  });
  await check(`${t}: readResource of nothing is -32602 with the URI`, async () => {
    await assert.rejects(client.readResource({ uri: 'cleo://task/T404' }, requestOptions),
                         (error) => rpcCode(error) === -32602);
  });
  await check(`${t}: complete a task id for the take prompt (open tasks only: T001 is done)`, async () => {
    const { completion } = await client.complete({ ref: { type: 'ref/prompt', name: 'take' }, argument: { name: 'id', value: 'T00' } },
                                                 requestOptions);
    assert.deepEqual(completion.values, ['T002']);
  });

  // The subscription: the 2025 revisions subscribe on the connection; 2026-07-28 opens a listen stream.
  const updated = [];
  if (v2) client.setNotificationHandler('notifications/resources/updated', (n) => { updated.push(n.params.uri); });
  else client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updated.push(n.params.uri); });
  let subscription;
  await check(`${t}: subscribe to cleo://task/T002`, async () => {
    if (v2) {
      subscription = await client.listen({ resourceSubscriptions: ['cleo://task/T002'] }, requestOptions);
      assert.deepEqual(subscription.honoredFilter.resourceSubscriptions, ['cleo://task/T002'], 'honoured');
    } else {
      assert.deepEqual(await client.subscribeResource({ uri: 'cleo://task/T002' }, requestOptions), {});
    }
  }, { fatal: true });
  await check(`${t}: a change by another process (ct update) is told: notifications/resources/updated`, async () => {
    const run = spawnSync(ct, ['update', 'T002', '--notes', 'from another process'], { cwd: dir, env: childEnv, encoding: 'utf8', timeout: STEP_MS });
    assert.equal(run.status, 0, `ct update: ${run.stderr}`);
    const until = Date.now() + 10_000;
    while (!updated.includes('cleo://task/T002') && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual([...new Set(updated)], ['cleo://task/T002'], 'notified URIs');
  });
  await check(`${t}: unsubscribe`, async () => {
    if (v2) await subscription.close();
    else assert.deepEqual(await client.unsubscribeResource({ uri: 'cleo://task/T002' }, requestOptions), {});
  });

  // MCP's logging utility (the handshake revisions' logging/setLevel): nothing until the client
  // sets a level, then what a call tells people — here the warning of a reply — before its result.
  if (!v2) {
    const logged = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { logged.push(n.params); });
    const warned = { name: 'cleo_query', arguments: { domain: 'tasks', operation: 'show', params: { taskId: 'T002' } } };
    await check(`${t}: logging: off until setLoggingLevel, then a reply's warning comes as notifications/message`, async () => {
      assert.ok(client.getServerCapabilities()?.logging, 'capabilities.logging');
      await client.callTool(warned, undefined, requestOptions);
      assert.equal(logged.length, 0, 'a log before any level was set');
      assert.deepEqual(await client.setLoggingLevel('warning', requestOptions), {});
      await client.callTool(warned, undefined, requestOptions);
      assert.equal(logged.length, 1, 'log messages for one call with one warning');
      assert.equal(logged[0].level, 'warning');
      assert.equal(logged[0].logger, 'cleo');
      assert.equal(logged[0].data.operation, 'tasks.show');
      assert.match(logged[0].data.warnings[0], /taskId is the original CLEO's name of id/);
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Long calls as MCP tasks (2025-11-25's tasks utility), with a client that declares tasks: the
// SDK's experimental callToolStream creates the task, polls it and fetches its result; a task
// cancelled stops the test command it runs.

// A person's `ct config set` (a command only people run, such as the test command): with no terminal
// here, a person key speaks for them (tests/support/person_key_fixture.h), listed in a home of its own.
const PERSON_KEY = 'ctpk_7e577e577e577e577e577e577e577e577e577e577e577e577e577e577e577e57';
let personHome = null;
async function personEnv() {
  if (!personHome) {
    personHome = await makeTempDir('person');
    await fs.mkdir(path.join(personHome, '.config', 'cleo'), { recursive: true });
    await fs.writeFile(path.join(personHome, '.config', 'cleo', 'person-keys.json'), JSON.stringify({
      keys: [{ name: 'tests', sha256: 'b2f09f61b002f94cd493bbe59ddd167c2dcc4271f14e3db413896bcec30121b5', createdAt: '2026-01-01T00:00:00Z' }],
    }), { mode: 0o600 });
  }
  return { ...childEnv, HOME: personHome, CT_PERSON_KEY: PERSON_KEY };
}

async function ctConfig(dir, key, value) {
  const run = spawnSync(ct, ['config', 'set', key, value], { cwd: dir, env: await personEnv(), encoding: 'utf8', timeout: STEP_MS });
  assert.equal(run.status, 0, `ct config set ${key}: ${run.stderr}`);
}

async function tasksChecks(t, client, dir) {
  await check(`${t}: a client that takes tasks sees cleo_mutate's taskSupport "optional"`, async () => {
    assert.ok(client.getServerCapabilities()?.tasks?.requests?.tools?.call, 'capabilities.tasks.requests.tools.call');
    const { tools } = await client.listTools(undefined, requestOptions);
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    assert.equal(byName.cleo_mutate.execution?.taskSupport, 'optional', 'cleo_mutate execution.taskSupport');
    assert.equal(byName.cleo_query.execution, undefined, 'cleo_query has no execution');
  });
  await check(`${t}: validate.test.run as a task: created, then its result`, async () => {
    await ctConfig(dir, 'validate.testCommand', 'true');
    const kinds = [];
    let result;
    const stream = client.experimental.tasks.callToolStream(
      { name: 'cleo_mutate', arguments: { domain: 'validate', operation: 'test.run' } }, undefined, { ...requestOptions, task: { ttl: 60000 } });
    for await (const message of stream) {
      kinds.push(message.type);
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    assert.equal(kinds[0], 'taskCreated', `messages: ${kinds.join(', ')}`);
    assert.equal(envelopeOf(result).success, true, 'the call succeeded');
  });
  await check(`${t}: a cancelled task stops its test command`, async () => {
    await ctConfig(dir, 'validate.testCommand', 'sleep 30');
    const stream = client.experimental.tasks.callToolStream(
      { name: 'cleo_mutate', arguments: { domain: 'validate', operation: 'test.run' } }, undefined, { ...requestOptions, task: {} });
    const first = await stream.next();
    assert.equal(first.value?.type, 'taskCreated', 'first message');
    const taskId = first.value.task.taskId;
    const started = Date.now();
    const cancelled = await client.experimental.tasks.cancelTask(taskId, requestOptions);
    assert.equal(cancelled.status, 'cancelled', 'status after tasks/cancel');
    assert.equal((await client.experimental.tasks.getTask(taskId, requestOptions)).status, 'cancelled', 'tasks/get');
    await stream.return();
    assert.ok(Date.now() - started < 5000, 'cancelled promptly');
  });
}

// ---------------------------------------------------------------------------------------------
// The MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned): what a person inspecting the
// server sees. It lists the prompts, the resources and the templates, and renders a prompt.

const inspectorCli = new URL('./node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js', import.meta.url).pathname;

async function inspectorChecks(t, target, home) {
  const inspect = (method, extra = []) => {
    // Its secrets file goes to HOME: a temporary one, never the real one.
    const run = spawnSync(process.execPath, [inspectorCli, '--cli', '--method', method, ...extra, ...target],
                          { env: { ...childEnv, HOME: home }, encoding: 'utf8', timeout: STEP_MS });
    if (run.error) throw run.error;
    assert.equal(run.status, 0, `inspector --method ${method} exited ${run.status}: ${tail(run.stderr || run.stdout, 5)}`);
    return JSON.parse(run.stdout);
  };
  await check(`${t}: the MCP Inspector CLI lists the prompts`, () => {
    assert.deepEqual(inspect('prompts/list').prompts.map((p) => p.name), ['next', 'take', 'handoff', 'decompose', 'review', 'spawn']);
  });
  await check(`${t}: the MCP Inspector CLI lists the resources and the templates`, () => {
    assert.ok(inspect('resources/list').resources.some((r) => r.uri === 'cleo://instructions'), 'cleo://instructions');
    assert.ok(inspect('resources/templates/list').resourceTemplates.some((r) => r.uriTemplate === 'cleo://task/{id}'), 'cleo://task/{id}');
  });
  await check(`${t}: the MCP Inspector CLI renders the next prompt`, () => {
    const { messages } = inspect('prompts/get', ['--prompt-name', 'next']);
    assert.ok(messages[0].content.text.includes('tasks.start'), 'the prompt names the call that takes a task');
  });
}

// ---------------------------------------------------------------------------------------------
// stdio: ct mcp --project DIR

function stdioTransport(dir, stderrSink) {
  const transport = new StdioClientTransport({
    command: ct,
    args: ['mcp', '--project', dir],
    env: childEnv,
    cwd: dir,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk) => stderrSink.push(chunk.toString()));
  return transport;
}

/// Connects (initialize + notifications/initialized); on failure closes what was started and aborts.
async function connect(name, client, transport, diagnostics) {
  try {
    await check(name, () => client.connect(transport, requestOptions), { fatal: true, diagnostics });
  } catch (error) {
    await withTimeout(client.close(), STEP_MS, 'close after a failed connect').catch(() => {});
    throw error;
  }
}

function newClient(capabilities = {}) {
  return new Client({ name: 'cleo-interop', version: '1.0.0' }, { capabilities });
}

/// The v2 client as a dual-era host configures it: server/discover first, the handshake only as a
/// fallback (ct answers the probe, so the client must stay in the stateless era).
function newClientV2() {
  return new ClientV2({ name: 'cleo-interop-v2', version: '2.0.0' }, { versionNegotiation: { mode: 'auto' } });
}

async function runStdio() {
  const t = 'stdio';
  const dir = await makeTempDir('stdio');
  const stderr = [];
  const diagnostics = () => (stderr.length ? `ct mcp stderr:\n${tail(stderr.join(''))}` : '');

  // Before `ct init`: the server runs, and tool calls answer E_NOT_INITIALIZED.
  {
    const client = newClient();
    const transport = stdioTransport(dir, stderr);
    await connect(`${t}: connect (uninitialised project)`, client, transport, diagnostics);
    try {
      await check(`${t}: error result: tool call before ct init is E_NOT_INITIALIZED`, async () => {
        expectError(await query(client, 'show', { id: 'T001' }), 'E_NOT_INITIALIZED');
      }, { diagnostics });
    } finally {
      await check(`${t}: close (uninitialised project)`, () => client.close());
    }
  }

  await check(`${t}: ct init creates the project`, () => ctInit(dir), { fatal: true });

  const client = newClient();
  const transport = stdioTransport(dir, stderr);
  await connect(`${t}: connect`, client, transport, diagnostics);
  // The SDK does not expose the child process; its private field lets us see how it ended
  // (exit status 0 when stdin closed, rather than the SDK's SIGTERM fallback after 2 s).
  const child = transport._process;
  const exited = child
    ? new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
        else child.once('exit', (code, signal) => resolve({ code, signal }));
      })
    : null;
  try {
    await sessionChecks(t, client);
    await featureChecks(t, client, dir);
    await inspectorChecks(t, [ct, 'mcp', '--project', dir], await makeTempDir('inspector-home'));
    const tasker = newClient({ tasks: {} });
    await connect(`${t}: connect a client that takes tasks`, tasker, stdioTransport(dir, stderr), diagnostics);
    try {
      await tasksChecks(t, tasker, dir);
    } finally {
      await check(`${t}: close the client that takes tasks`, () => tasker.close());
    }
  } finally {
    await check(`${t}: close; ct mcp exits with status 0 when stdin closes`, async () => {
      const started = Date.now();
      await client.close();
      if (exited) {
        const { code, signal } = await exited;
        assert.equal(signal, null, `ct mcp was killed by ${signal} (it did not exit when stdin closed)`);
        assert.equal(code, 0, 'exit status');
      } else {
        assert.ok(Date.now() - started < 1900, 'ct mcp did not exit promptly when stdin closed');
      }
    }, { diagnostics });
  }
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP: ct serve --project DIR --port 0

function startServe(dir) {
  const child = spawn(ct, ['serve', '--project', dir, '--port', '0'], {
    cwd: dir,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const output = { stdout: [], stderr: [] };
  const exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  child.stderr.on('data', (chunk) => output.stderr.push(chunk.toString()));
  const url = new Promise((resolve, reject) => {
    child.once('error', reject);
    const lines = readline.createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      output.stdout.push(line + '\n');
      const match = /CLEO MCP server: (http:\/\/\S+)/.exec(line);
      if (match) resolve(match[1]);
    });
    exited.then(({ code, signal }) =>
      reject(new Error(`ct serve exited (${code ?? signal}) before printing its URL`)));
  });
  url.catch(() => {}); // reported by the check that awaits it
  return { child, url, exited, output };
}

async function runHttp() {
  const t = 'http';
  const dir = await makeTempDir('http');
  await check(`${t}: ct init creates the project`, () => ctInit(dir), { fatal: true });

  const server = startServe(dir);
  const diagnostics = () => {
    const parts = [];
    if (server.output.stdout.length) parts.push(`ct serve stdout:\n${tail(server.output.stdout.join(''))}`);
    if (server.output.stderr.length) parts.push(`ct serve stderr:\n${tail(server.output.stderr.join(''))}`);
    return parts.join('\n');
  };
  try {
    const url = await check(`${t}: ct serve --port 0 prints its URL`, async () => {
      const text = await server.url;
      const parsed = new URL(text);
      assert.equal(parsed.protocol, 'http:', 'URL scheme');
      assert.notEqual(parsed.port, '0', 'a real port was chosen');
      assert.equal(parsed.pathname, '/mcp', 'URL path');
      return parsed;
    }, { fatal: true, diagnostics });

    const client = newClient();
    const transport = new StreamableHTTPClientTransport(url);
    await connect(`${t}: connect`, client, transport, diagnostics);
    try {
      await check(`${t}: the server assigned a session id`, () => {
        assert.ok(typeof transport.sessionId === 'string' && transport.sessionId.length > 0, 'Mcp-Session-Id');
      });
      await sessionChecks(t, client);
      await featureChecks(t, client, dir);
      await inspectorChecks(t, ['--transport', 'http', '--server-url', url.href], await makeTempDir('inspector-home'));
      const tasker = newClient({ tasks: {} });
      await connect(`${t}: connect a client that takes tasks`, tasker, new StreamableHTTPClientTransport(url), diagnostics);
      try {
        await tasksChecks(t, tasker, dir);
      } finally {
        await check(`${t}: close the client that takes tasks`, () => tasker.close());
      }
      await check(`${t}: terminateSession (DELETE /mcp)`, async () => {
        await transport.terminateSession();
        assert.equal(transport.sessionId, undefined, 'session id cleared after termination');
      }, { diagnostics });
    } finally {
      await check(`${t}: close`, () => client.close());
    }

    await check(`${t}: ct serve exits with status 0 on SIGTERM`, async () => {
      // The SDK's fetch may still hold an idle keep-alive connection: a real host would too.
      server.child.kill('SIGTERM');
      const limit = STEP_MS - 1000;
      const { code, signal } = await withTimeout(server.exited, limit,
        `ct serve still running ${limit / 1000} s after SIGTERM (with the client's idle keep-alive connection open)`);
      assert.equal(signal, null, `ct serve was ended by ${signal}, not by its own shutdown`);
      assert.equal(code, 0, 'exit status');
    }, { diagnostics });
  } finally {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  }
}

// ---------------------------------------------------------------------------------------------
// 2026-07-28 with the v2 client: stdio (ct mcp) and Streamable HTTP (ct serve), no handshake.

async function runStdioStateless() {
  const t = 'stdio 2026-07-28';
  const dir = await makeTempDir('stdio2026');
  await check(`${t}: ct init creates the project`, () => ctInit(dir), { fatal: true });
  const stderr = [];
  const diagnostics = () => (stderr.length ? `ct mcp stderr:\n${tail(stderr.join(''))}` : '');
  const client = newClientV2();
  // The probe runs on a sibling process the SDK spawns and discards; the session's own process
  // starts once the era is known.
  const transport = new StdioClientTransportV2({ command: ct, args: ['mcp', '--project', dir], env: childEnv, cwd: dir, stderr: 'pipe' });
  transport.stderr?.on('data', (chunk) => stderr.push(chunk.toString()));
  await connect(`${t}: connect (server/discover answers: no initialize)`, client, transport, diagnostics);
  try {
    await sessionChecks(t, client, { stateless: true });
    await featureChecks(t, client, dir, { v2: true });
  } finally {
    await check(`${t}: close`, () => client.close(), { diagnostics });
  }
}

async function runHttpStateless() {
  const t = 'http 2026-07-28';
  const dir = await makeTempDir('http2026');
  await check(`${t}: ct init creates the project`, () => ctInit(dir), { fatal: true });
  const server = startServe(dir);
  const diagnostics = () => (server.output.stderr.length ? `ct serve stderr:\n${tail(server.output.stderr.join(''))}` : '');
  try {
    const url = new URL(await check(`${t}: ct serve --port 0 prints its URL`, () => server.url, { fatal: true, diagnostics }));
    const client = newClientV2();
    const transport = new StreamableHTTPClientTransportV2(url);
    await connect(`${t}: connect (server/discover answers: no initialize)`, client, transport, diagnostics);
    try {
      await check(`${t}: no session: the server issued no Mcp-Session-Id`, () => {
        assert.equal(transport.sessionId, undefined, 'Mcp-Session-Id');
      });
      await sessionChecks(t, client, { stateless: true });
      await featureChecks(t, client, dir, { v2: true });
    } finally {
      await check(`${t}: close`, () => client.close());
    }
    await check(`${t}: ct serve exits with status 0 on SIGTERM`, async () => {
      server.child.kill('SIGTERM');
      const { code, signal } = await withTimeout(server.exited, STEP_MS - 1000, 'ct serve after SIGTERM');
      assert.equal(signal, null, `ct serve was ended by ${signal}`);
      assert.equal(code, 0, 'exit status');
    }, { diagnostics });
  } finally {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  }
}

// ---------------------------------------------------------------------------------------------

async function cleanup() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  await Promise.all(tempDirs.map((dir) => fs.rm(dir, { recursive: true, force: true }).catch(() => {})));
}

function finish(code) {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(code);
}

const watchdog = setTimeout(async () => {
  failed += 1;
  console.log(`FAIL the whole run took longer than ${TOTAL_MS / 1000} s`);
  await cleanup();
  finish(1);
}, TOTAL_MS);
watchdog.unref();

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    await cleanup();
    process.exit(1);
  });
}

console.log(`# ct: ${ct}`);
console.log(`# node ${process.version}, @modelcontextprotocol/sdk ${await sdkVersion('sdk')}, ` +
            `@modelcontextprotocol/client ${await sdkVersion('client')}, @modelcontextprotocol/inspector ${await sdkVersion('inspector')}`);

for (const [name, run] of [['stdio', runStdio], ['http', runHttp], ['stdio 2026-07-28', runStdioStateless],
                           ['http 2026-07-28', runHttpStateless]]) {
  try {
    await run();
  } catch (error) {
    if (!(error instanceof Abort)) {
      failed += 1;
      console.log(`FAIL ${name}: unexpected error: ${describe(error)}`);
    } else {
      console.log(`# ${name}: remaining checks skipped after '${error.message}' failed`);
    }
  }
}

await cleanup();
clearTimeout(watchdog);
finish(failed === 0 && passed > 0 ? 0 : 1);

async function sdkVersion(name) {
  try {
    const url = new URL(`./node_modules/@modelcontextprotocol/${name}/package.json`, import.meta.url);
    return JSON.parse(await fs.readFile(url, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}
