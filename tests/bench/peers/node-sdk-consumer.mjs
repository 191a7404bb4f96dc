// SPDX-License-Identifier: Apache-2.0
// A minimal consumer on the official Apache Iggy Node.js SDK (apache/iggy foreign/node, a
// checkout with its npm dependencies, given as ISS_BENCH_NODE_SDK; never part of this
// repository), a peer of tests/bench/e2e_bench.py: it reads a topic with the SDK's consumer
// group stream (groupConsumerStream: PollingStrategy.Next, auto-commit on poll, the SDK's
// defaults) and writes the messages to S3 as JSON-lines objects, MAX_RECORDS per partition
// and object (one line per message: stream, topic, partition_id, offset, payload as a string),
// each with one SigV4-signed PutObject (node:crypto, node:http). SIGTERM uploads what is
// buffered, then exits 0. Its delivery is the SDK's: offsets are committed when polled, so a
// kill loses what was buffered (the bench counts it).
//
// Usage (run by the bench, which fills the @...@ placeholders):
//   node --import ISS_BENCH_NODE_SDK/node_modules/@swc-node/register/esm-register.mjs \
//     node-sdk-consumer.mjs HOST:PORT USER PASSWORD STREAM TOPIC GROUP ENDPOINT BUCKET PREFIX REGION MAX_RECORDS
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY from the environment.
import { createHash, createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { pathToFileURL } from 'node:url';

const [address, user, password, streamName, topicName, groupName, endpoint, bucket, prefix, region, maxText] =
  process.argv.slice(2);
if (!maxText || !process.env.ISS_BENCH_NODE_SDK) {
  console.error('usage: node-sdk-consumer.mjs HOST:PORT USER PASSWORD STREAM TOPIC GROUP ENDPOINT BUCKET PREFIX ' +
    'REGION MAX_RECORDS (ISS_BENCH_NODE_SDK: the SDK checkout; AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)');
  process.exit(2);
}
const maxRecords = Number(maxText);
const sdk = await import(pathToFileURL(`${process.env.ISS_BENCH_NODE_SDK}/src/index.ts`).href);

const accessKey = process.env.AWS_ACCESS_KEY_ID;
const secretKey = process.env.AWS_SECRET_ACCESS_KEY;
const base = new URL(endpoint);

const sha256 = (data) => createHash('sha256').update(data).digest('hex');
const hmac = (key, data) => createHmac('sha256', key).update(data).digest();

// PutObject, path style, AWS Signature Version 4 (AWS docs: "Signature Version 4 signing
// process"), the body's SHA-256 in x-amz-content-sha256. Resolves on 200, rejects otherwise.
function putObject(key, body) {
  const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
  const day = amzDate.slice(0, 8);
  const path = `/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  const payloadHash = sha256(body);
  const headers = { host: base.host, 'x-amz-content-sha256': payloadHash, 'x-amz-date': amzDate };
  const signed = Object.keys(headers).sort();
  const canonical = ['PUT', path, '', ...signed.map((h) => `${h}:${headers[h]}`), '', signed.join(';'),
    payloadHash].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const kSigning = hmac(hmac(hmac(hmac(`AWS4${secretKey}`, day), region), 's3'), 'aws4_request');
  const signature = createHmac('sha256', kSigning).update(toSign).digest('hex');
  headers.authorization = `AWS4-HMAC-SHA256 Credential=${accessKey}/${scope}, SignedHeaders=${signed.join(';')}, ` +
    `Signature=${signature}`;
  headers['content-length'] = body.length;
  const lib = base.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request({ hostname: base.hostname, port: base.port, method: 'PUT', path, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => (res.statusCode === 200 ? resolve() :
        reject(new Error(`PutObject ${key}: HTTP ${res.statusCode} ${Buffer.concat(chunks).toString().slice(0, 300)}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const buffers = new Map(); // partition id -> { first, last, lines }
async function upload(partition, buf) {
  const pad = (n, w) => String(n).padStart(w, '0');
  const key = `${prefix}/${streamName}/${topicName}/${pad(partition, 5)}-${pad(buf.first, 20)}-${pad(buf.last, 20)}.jsonl`;
  await putObject(key, Buffer.from(buf.lines.join('')));
}

async function handle(polled) {
  const partition = polled.partitionId;
  for (const m of polled.messages) {
    const offset = m.headers.offset;
    let buf = buffers.get(partition);
    if (!buf) {
      buf = { first: offset, last: offset, lines: [] };
      buffers.set(partition, buf);
    }
    buf.last = offset;
    buf.lines.push(JSON.stringify({ stream: streamName, topic: topicName, partition_id: partition,
      offset: Number(offset), payload: m.payload.toString() }) + '\n');
    if (buf.lines.length >= maxRecords) {
      buffers.delete(partition);
      await upload(partition, buf);
    }
  }
}

async function flushAll() {
  for (const [partition, buf] of [...buffers]) {
    buffers.delete(partition);
    await upload(partition, buf);
  }
}

let chain = Promise.resolve();
const enqueue = (fn) => (chain = chain.then(fn));
const fail = (e) => {
  console.error(`node-sdk-consumer: ${e.stack || e}`);
  process.exit(1);
};
process.on('SIGTERM', () => {
  enqueue(flushAll).then(() => process.exit(0), fail);
});

const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
const config = { transport: 'TCP', options: { host, port }, credentials: { username: user, password } };
const consume = sdk.groupConsumerStream(config);
const stream = await consume({
  groupName, streamId: streamName, topicId: topicName, pollingStrategy: sdk.PollingStrategy.Next,
  count: 1000, interval: 100, autocommit: true, endOnLastOffset: false,
});
stream.on('error', fail);
console.log(`node-sdk-consumer: group ${groupName} on ${streamName}/${topicName} at ${address}, ` +
  `${maxRecords} records per object to ${endpoint}/${bucket}/${prefix}`);
for await (const polled of stream) {
  await enqueue(() => handle(polled)).catch(fail);
}
