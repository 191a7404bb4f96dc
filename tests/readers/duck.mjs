// SPDX-License-Identifier: Apache-2.0
// DuckDB (npm @duckdb/node-api) as the independent reader of the Parquet and CSV objects the
// sink writes. Test-only; installed by scripts/install-deps into tests/readers/node_modules.
//
//   node duck.mjs types DIR      every type round trip (DIR/types.expected.json), all codecs, and CSV
//   node duck.mjs groups DIR     row groups, dictionary + fallback, statistics (DIR/groups.*)
//   node duck.mjs envelope DIR   the envelope schema with its headers map
//   node duck.mjs gzip FILE.gz   a gzip json_lines object equals FILE.gz.plain line for line and value for value
//   node duck.mjs query SQL      runs SQL, prints the rows as JSON (one array) on stdout
//   node duck.mjs scanned SQL    the same with the rows the scans read: {rows_scanned, result}
//
// Exit status 0 when every check holds; 1 with a message per failed check.
import { DuckDBInstance } from '@duckdb/node-api';
import fs from 'node:fs';
import path from 'node:path';

const [mode, arg] = process.argv.slice(2);
const inst = await DuckDBInstance.create(':memory:');
const con = await inst.connect();
let failures = 0;

async function rows(sql) {
    const r = await con.runAndReadAll(sql);
    return r.getRowObjectsJson();
}
/// Rows the scans read for `sql` (DuckDB's profiler, cumulative_rows_scanned): 0 when the
/// Parquet statistics answer the query without reading a row group.
async function scanned(sql) {
    const out = path.join(process.env.TMPDIR || '/tmp', `duck-profile-${process.pid}.json`);
    await con.run("SET enable_profiling = 'json'");
    await con.run(`SET profiling_output = ${q(out)}`);
    await con.run(`SET custom_profiling_settings = '{"CUMULATIVE_ROWS_SCANNED": "true", "OPERATOR_ROWS_SCANNED": "true"}'`);
    const result = await rows(sql);
    await con.run("SET enable_profiling = 'no_output'");
    const prof = JSON.parse(fs.readFileSync(out, 'utf8'));
    fs.unlinkSync(out);
    return { rows_scanned: prof.cumulative_rows_scanned, result };
}
function check(ok, what) {
    if (!ok) {
        failures++;
        console.error(`FAIL: ${what}`);
    }
}
const q = (s) => `'${s.replaceAll("'", "''")}'`;
const id = (s) => `"${s.replaceAll('"', '""')}"`;

function expr(kind, c) {
    const n = id(c);
    switch (kind) {
        case 'text': return `${n}::VARCHAR`;
        case 'hex': return `hex(${n})`;
        case 'int': return `${n}::VARCHAR`;
        case 'real': return `${n}::DOUBLE`;
        case 'bool': return `${n}::VARCHAR`;
        case 'ts_ms': return `epoch_ms(${n})::VARCHAR`;
        case 'ts_us': return `epoch_us(${n})::VARCHAR`;
        case 'days': return `(${n} - DATE '1970-01-01')::VARCHAR`;
    }
    throw new Error(`kind ${kind}`);
}

function same(kind, got, want) {
    if (want === null) return got === null;
    if (kind === 'real') return got !== null && Object.is(Number(got), want);
    return got === want;
}

if (mode === 'types') {
    const exp = JSON.parse(fs.readFileSync(path.join(arg, 'types.expected.json'), 'utf8'));
    for (const file of exp.files) {
        const f = path.join(arg, file);
        const sel = exp.columns.map((c, i) => `${expr(exp.kinds[i], c)} AS ${id(c)}`).join(', ');
        const got = await rows(`SELECT ${sel} FROM read_parquet(${q(f)}) ORDER BY ${id(exp.order)}`);
        check(got.length === exp.rows.length, `${file}: ${got.length} rows, want ${exp.rows.length}`);
        exp.rows.forEach((want, r) => {
            exp.columns.forEach((c, i) => {
                const g = got[r]?.[c] ?? null;
                check(same(exp.kinds[i], g, want[i]), `${file} row ${r} ${c}: got ${JSON.stringify(g)}, want ${JSON.stringify(want[i])}`);
            });
        });
        // Declared types as DuckDB sees them.
        const desc = await rows(`DESCRIBE SELECT * FROM read_parquet(${q(f)})`);
        const types = Object.fromEntries(desc.map((d) => [d.column_name, d.column_type]));
        const wantTypes = { c_string: 'VARCHAR', c_int32: 'INTEGER', c_int64: 'BIGINT', c_float: 'FLOAT', c_double: 'DOUBLE',
                            c_bool: 'BOOLEAN', c_ts_ms: 'TIMESTAMP WITH TIME ZONE', c_ts_us: 'TIMESTAMP WITH TIME ZONE',
                            c_date: 'DATE', c_binary: 'BLOB', c_offset: 'BIGINT' };
        for (const [c, t] of Object.entries(wantTypes)) check(types[c] === t, `${file}: ${c} is ${types[c]}, want ${t}`);
        check(types.c_json === 'JSON' || types.c_json === 'VARCHAR', `${file}: c_json is ${types.c_json}`);
        // Statistics in the footer: min/max of c_int64 are the int64 extremes; nulls counted.
        const st = await rows(`SELECT stats_min_value, stats_max_value, stats_null_count FROM parquet_metadata(${q(f)}) WHERE path_in_schema = 'c_int64'`);
        check(st.length === 1 && st[0].stats_min_value === '-9223372036854775808' && st[0].stats_max_value === '9223372036854775807'
              && String(st[0].stats_null_count) === '1', `${file}: c_int64 statistics ${JSON.stringify(st)}`);
        const codec = await rows(`SELECT DISTINCT compression FROM parquet_metadata(${q(f)})`);
        const want = { none: 'UNCOMPRESSED', snappy: 'SNAPPY', zstd: 'ZSTD', gzip: 'GZIP' }[file.split('.')[1]];
        check(codec.length === 1 && codec[0].compression === want, `${file}: compression ${JSON.stringify(codec)}, want ${want}`);
    }
    // CSV: same rows as text (all_varchar), nulls as empty fields, quoted strings kept.
    const csv = path.join(arg, 'types.csv');
    const got = await rows(`SELECT * FROM read_csv(${q(csv)}, header = true, all_varchar = true, quote = '"', escape = '"', delim = ',', allow_quoted_nulls = false) ORDER BY c_offset::BIGINT`);
    check(got.length === exp.rows.length, `types.csv: ${got.length} rows`);
    exp.rows.forEach((want, r) => {
        exp.columns.forEach((c, i) => {
            const g = got[r]?.[c] ?? null;
            if (want[i] === null) check(g === null, `types.csv row ${r} ${c}: got ${JSON.stringify(g)}, want null`);
            else if (['text', 'int'].includes(exp.kinds[i]) && c !== 'c_json') check(g === want[i], `types.csv row ${r} ${c}: got ${JSON.stringify(g)}, want ${JSON.stringify(want[i])}`);
            // A float is written as its own shortest text: round it to float32 before comparing.
            else if (exp.kinds[i] === 'real') {
                const v = c === 'c_float' ? Math.fround(Number(g)) : Number(g);
                check(Object.is(v, want[i]), `types.csv row ${r} ${c}: got ${g}, want ${want[i]}`);
            }
        });
    });
} else if (mode === 'groups') {
    const exp = JSON.parse(fs.readFileSync(path.join(arg, 'groups.expected.json'), 'utf8'));
    const f = q(path.join(arg, 'groups.parquet'));
    const [agg] = await rows(`SELECT count(*)::VARCHAR AS n, sum(n)::VARCHAR AS s, count(DISTINCT cat)::VARCHAR AS cats, count(DISTINCT u)::VARCHAR AS us FROM read_parquet(${f})`);
    check(agg.n === String(exp.rows), `groups: count ${agg.n}`);
    check(agg.s === String(exp.sum_n), `groups: sum ${agg.s}, want ${exp.sum_n}`);
    check(agg.cats === '10' && agg.us === String(exp.rows), `groups: distinct ${JSON.stringify(agg)}`);
    const meta = await rows(`SELECT row_group_id::INTEGER AS g, path_in_schema AS c, encodings, stats_min_value AS lo, stats_max_value AS hi, row_group_num_rows::BIGINT AS rows FROM parquet_metadata(${f}) ORDER BY g, c`);
    const groups = new Set(meta.map((m) => m.g));
    check(groups.size > 1, `groups: ${groups.size} row group(s), want several`);
    const cat = meta.filter((m) => m.c === 'cat');
    check(cat.every((m) => m.encodings.includes('RLE_DICTIONARY')), `groups: cat is dictionary-encoded in every row group: ${JSON.stringify(cat.map((m) => m.encodings))}`);
    const u = meta.filter((m) => m.c === 'u');
    check(u.every((m) => !m.encodings.includes('RLE_DICTIONARY')), `groups: u fell back to PLAIN: ${JSON.stringify(u.map((m) => m.encodings))}`);
    // n ascends: each row group's [min, max] follows the previous one's, so a filter prunes.
    const n = meta.filter((m) => m.c === 'n');
    let prev = -1, total = 0;
    for (const m of n) {
        check(Number(m.lo) === prev + 1, `groups: row group ${m.g} min ${m.lo}, want ${prev + 1}`);
        prev = Number(m.hi);
        total += Number(m.rows);
    }
    check(total === exp.rows && prev === exp.rows - 1, `groups: rows ${total}, last max ${prev}`);
    const [sel] = await rows(`SELECT count(*)::VARCHAR AS c FROM read_parquet(${f}) WHERE n >= 9990`);
    check(sel.c === '10', `groups: filter count ${sel.c}`);
    // The statistics answer a filter beyond every row group without reading one; a filter
    // inside the range has to read rows.
    const none = await scanned(`SELECT count(*)::VARCHAR AS c FROM read_parquet(${f}) WHERE n >= 10000`);
    const some = await scanned(`SELECT count(*)::VARCHAR AS c FROM read_parquet(${f}) WHERE v > 90`);
    check(none.rows_scanned === 0 && none.result[0].c === '0', `groups: n >= 10000 scanned ${JSON.stringify(none)}`);
    check(some.rows_scanned > 0, `groups: v > 90 scanned ${JSON.stringify(some)}`);
} else if (mode === 'envelope') {
    const f = q(path.join(arg, 'envelope.parquet'));
    const got = await rows(`SELECT stream, topic, partition_id::VARCHAR AS p, "offset"::VARCHAR AS o, id, epoch_us("timestamp")::VARCHAR AS ts, cardinality(headers)::VARCHAR AS nh, headers['h']::VARCHAR AS h, payload FROM read_parquet(${f}) ORDER BY "offset"`);
    const want = [
        { stream: 'app', topic: 'requests', p: '7', o: '0', id: '01020304050607080000000000000000', ts: '1796000523000004', nh: '1', h: '5', payload: '{"x":1}' },
        { stream: 'app', topic: 'requests', p: '7', o: '1', id: '01020304050607080000000000000001', ts: '1796000523000005', nh: '0', h: null, payload: '{"x":2}' },
    ];
    check(JSON.stringify(got) === JSON.stringify(want), `envelope: got ${JSON.stringify(got)}`);
} else if (mode === 'gzip') {
    // A gzip json_lines object (several gzip members) against the same records uncompressed
    // (FILE.plain): line for line equal, and the same JSON values.
    const gz = q(arg), plain = q(`${arg}.plain`);
    const lines = (f, comp) => `SELECT row_number() OVER () AS i, line FROM read_csv(${f}, columns = {'line': 'VARCHAR'}, `
        + `header = false, delim = '\x01', quote = '', escape = '', compression = '${comp}')`;
    const [cmp] = await rows(`SELECT (SELECT count(*) FROM (${lines(gz, 'gzip')}))::VARCHAR AS n_gz, `
        + `(SELECT count(*) FROM (${lines(plain, 'none')}))::VARCHAR AS n_plain, `
        + `(SELECT count(*) FROM (${lines(gz, 'gzip')}) g FULL JOIN (${lines(plain, 'none')}) p USING (i) `
        + `WHERE g.line IS DISTINCT FROM p.line)::VARCHAR AS differ`);
    check(cmp.n_gz === '5000' && cmp.n_plain === '5000' && cmp.differ === '0', `gzip lines: ${JSON.stringify(cmp)}`);
    const [j] = await rows(`SELECT count(*)::VARCHAR AS n, sum(payload.n)::VARCHAR AS s, min("offset")::VARCHAR AS lo, `
        + `max("offset")::VARCHAR AS hi FROM read_json(${gz}, format = 'newline_delimited', compression = 'gzip')`);
    check(j.n === '5000' && j.s === String(4999 * 5000 / 2) && j.lo === '0' && j.hi === '4999', `gzip json: ${JSON.stringify(j)}`);
} else if (mode === 'query') {
    console.log(JSON.stringify(await rows(arg)));
} else if (mode === 'scanned') {
    console.log(JSON.stringify(await scanned(arg)));
} else {
    console.error('usage: duck.mjs types|groups|envelope DIR | gzip FILE.gz | query SQL');
    process.exit(2);
}
if (failures > 0) {
    console.error(`${failures} check(s) failed`);
    process.exit(1);
}
