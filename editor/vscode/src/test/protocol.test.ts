// protocol.ts against docs/protocol.md, the contract with the daemon: every method of
// METHODS, every field of protocol.ts's types and every string value they allow must be
// written in the doc's code (a `code span` or a fenced block), and every method the
// extension's code sends, answers or reads must be in METHODS. A failure names what is
// missing. Read with TypeScript's own parser: no pid, no VS Code.

import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import ts from 'typescript';
import { METHODS } from '../protocol';

/** The extension's folder (this file runs from out/test/). */
const root = path.resolve(__dirname, '..', '..');
const protocolDoc = path.resolve(root, '..', '..', 'docs', 'protocol.md');

function parse(file: string): ts.SourceFile {
	return ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
}

/** docCode returns the text of the doc's code: its fenced blocks and its `code spans`, one per entry. */
function docCode(markdown: string): string[] {
	const out: string[] = [];
	const prose: string[] = [];
	let fence: string[] | undefined;
	for (const line of markdown.split('\n')) {
		if (/^\s*(```|~~~)/.test(line)) {
			if (fence) {
				out.push(fence.join('\n'));
				fence = undefined;
			} else {
				fence = [];
			}
			continue;
		}
		(fence ?? prose).push(line);
	}
	for (const m of prose.join('\n').matchAll(/(`+)([^`]+?)\1/g)) {
		out.push(m[2]);
	}
	return out;
}

/** documented reports whether name appears in the doc's code as a whole token (not inside a longer name or method). */
function documented(code: readonly string[], name: string): boolean {
	const esc = name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
	const re = new RegExp(`(^|[^A-Za-z0-9_$/])${esc}($|[^A-Za-z0-9_$/])`);
	return code.some((c) => re.test(c));
}

/** Fields and string values of the protocol's types, each with where it is declared. */
interface Shapes {
	fields: Map<string, string>;
	values: Map<string, string>;
}

/** shapes collects the property names and string literal types of protocol.ts's interfaces and type aliases, nested ones included. */
function shapes(source: ts.SourceFile): Shapes {
	const fields = new Map<string, string>();
	const values = new Map<string, string>();
	const visit = (node: ts.Node, owner: string) => {
		if (ts.isPropertySignature(node) && node.name && (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))) {
			const name = node.name.text;
			if (!fields.has(name)) {
				fields.set(name, owner);
			}
			owner = `${owner}.${name}`;
		} else if (ts.isLiteralTypeNode(node) && ts.isStringLiteral(node.literal)) {
			if (!values.has(node.literal.text)) {
				values.set(node.literal.text, owner);
			}
		}
		ts.forEachChild(node, (c) => visit(c, owner));
	};
	for (const st of source.statements) {
		if (ts.isInterfaceDeclaration(st) || ts.isTypeAliasDeclaration(st)) {
			visit(st, st.name.text);
		}
	}
	return { fields, values };
}

/** usedMethods collects the methods the extension's code names: sendRequest/sendNotification/onRequest/onNotification's first argument, and what `method` is compared with (=== / !== or switch cases). */
function usedMethods(files: readonly string[]): Map<string, string> {
	const used = new Map<string, string>();
	const add = (lit: ts.Node, sf: ts.SourceFile) => {
		if (ts.isStringLiteral(lit) || ts.isNoSubstitutionTemplateLiteral(lit)) {
			const { line } = sf.getLineAndCharacterOfPosition(lit.getStart(sf));
			if (!used.has(lit.text)) {
				used.set(lit.text, `${path.basename(sf.fileName)}:${line + 1}`);
			}
		}
	};
	const isMethod = (e: ts.Node) => ts.isIdentifier(e) && e.text === 'method';
	for (const file of files) {
		const sf = parse(file);
		const visit = (node: ts.Node) => {
			if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.arguments.length > 0) {
				if (['sendRequest', 'sendNotification', 'onRequest', 'onNotification'].includes(node.expression.name.text)) {
					add(node.arguments[0], sf);
				}
			} else if (ts.isBinaryExpression(node) && [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(node.operatorToken.kind)) {
				if (isMethod(node.left)) {
					add(node.right, sf);
				} else if (isMethod(node.right)) {
					add(node.left, sf);
				}
			} else if (ts.isSwitchStatement(node) && isMethod(node.expression)) {
				for (const c of node.caseBlock.clauses) {
					if (ts.isCaseClause(c)) {
						add(c.expression, sf);
					}
				}
			}
			ts.forEachChild(node, visit);
		};
		visit(sf);
	}
	return used;
}

/** The extension's own sources (not its tests, not the page's script). */
function extensionSources(): string[] {
	const dir = path.join(root, 'src');
	return fs
		.readdirSync(dir)
		.filter((f) => f.endsWith('.ts'))
		.map((f) => path.join(dir, f));
}

const allMethods: readonly string[] = Object.values(METHODS).flat();

test('docs/protocol.md documents every method protocol.ts names', () => {
	const code = docCode(fs.readFileSync(protocolDoc, 'utf8'));
	const missing = allMethods.filter((m) => !documented(code, m));
	assert.deepEqual(missing, [], `methods of protocol.ts's METHODS that docs/protocol.md does not name in code: ${missing.join(', ')}`);
});

test("docs/protocol.md documents every field and string value of protocol.ts's types", () => {
	const code = docCode(fs.readFileSync(protocolDoc, 'utf8'));
	const { fields, values } = shapes(parse(path.join(root, 'src', 'protocol.ts')));
	assert.ok(fields.size > 50 && values.size > 20, `protocol.ts read as ${fields.size} fields and ${values.size} values: the reader is broken`);
	const missingFields = [...fields].filter(([f]) => !documented(code, f)).map(([f, owner]) => `${f} (${owner})`);
	const missingValues = [...values].filter(([v]) => !documented(code, v) && !documented(code, `"${v}"`)).map(([v, owner]) => `"${v}" (${owner})`);
	assert.deepEqual(
		{ fields: missingFields, values: missingValues },
		{ fields: [], values: [] },
		`protocol.ts's fields and string values that docs/protocol.md does not name in code: ${[...missingFields, ...missingValues].join(', ')}`,
	);
});

test("every method the extension's code sends, answers or reads is in protocol.ts's METHODS", () => {
	const used = usedMethods(extensionSources());
	assert.ok(used.has('session/prompt') && used.has('beforeToolCall') && used.has('toolEnd'), `the scan found too little: ${[...used.keys()].join(', ')}`);
	const unknown = [...used].filter(([m]) => !allMethods.includes(m)).map(([m, at]) => `${m} (${at})`);
	const unused = allMethods.filter((m) => !used.has(m));
	assert.deepEqual(
		{ unknown, unused },
		{ unknown: [], unused: [] },
		`methods the extension uses that protocol.ts's METHODS does not name: ${unknown.join(', ') || 'none'}; methods of METHODS the extension's code never uses: ${unused.join(', ') || 'none'}`,
	);
});

test('the doc reader: code spans and fenced blocks count, prose and longer names do not', () => {
	const code = docCode('The field sessionId is prose.\n\n`toolCallId` and `session/new`\n\n```json\n{"stopReason": "toolUse"}\n```\n');
	assert.equal(documented(code, 'toolCallId'), true);
	assert.equal(documented(code, 'session/new'), true);
	assert.equal(documented(code, 'stopReason'), true);
	assert.equal(documented(code, '"toolUse"'), true);
	assert.equal(documented(code, 'sessionId'), false);
	assert.equal(documented(code, 'session'), false);
	assert.equal(documented(code, 'new'), false);
	assert.equal(documented(code, 'toolCall'), false);
});
