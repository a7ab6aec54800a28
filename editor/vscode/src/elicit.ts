// An MCP server's question (elicitation/create) as a small form the chat shows: one field per
// property of its flat requestedSchema (text, number, yes/no, a choice), and the answers
// typed into it checked and turned into the MCP result's content. No `vscode` import: tests
// run this under plain node.

import type { Field } from './webviewProtocol';

// (Field and FieldType are in webviewProtocol.ts: the view builds the form from them.)
export type { Field, FieldType } from './webviewProtocol';

function obj(v: unknown): Record<string, unknown> | undefined {
	return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

/**
 * formFields reads a requestedSchema (MCP's flat object of strings, numbers, booleans and
 * enums) into fields, in the schema's order. Properties of other types are left out (a server
 * may not ask for them); an absent schema gives no fields (the question is yes/no: accept or
 * decline).
 */
export function formFields(schema: unknown): Field[] {
	const s = obj(schema);
	const props = obj(s?.properties);
	if (!props) {
		return [];
	}
	const required = new Set(Array.isArray(s?.required) ? (s.required as unknown[]).filter((r): r is string => typeof r === 'string') : []);
	const out: Field[] = [];
	for (const [name, raw] of Object.entries(props)) {
		const p = obj(raw);
		if (!p) {
			continue;
		}
		const label = typeof p.title === 'string' && p.title.trim() !== '' ? p.title : name;
		const base: Field = { name, label, type: 'string', required: required.has(name) };
		if (typeof p.description === 'string') {
			base.description = p.description;
		}
		const en = Array.isArray(p.enum) ? p.enum.filter((v): v is string => typeof v === 'string') : undefined;
		if (en && en.length > 0) {
			const names = Array.isArray(p.enumNames) ? p.enumNames : [];
			base.type = 'enum';
			base.options = en.map((value, i) => ({ value, label: typeof names[i] === 'string' ? (names[i] as string) : value }));
			if (typeof p.default === 'string' && en.includes(p.default)) {
				base.default = p.default;
			}
			out.push(base);
			continue;
		}
		switch (p.type) {
			case 'string':
				if (typeof p.default === 'string') base.default = p.default;
				if (typeof p.minLength === 'number') base.minLength = p.minLength;
				if (typeof p.maxLength === 'number') base.maxLength = p.maxLength;
				if (typeof p.format === 'string') base.format = p.format;
				break;
			case 'number':
			case 'integer':
				base.type = p.type;
				if (typeof p.default === 'number') base.default = p.default;
				if (typeof p.minimum === 'number') base.minimum = p.minimum;
				if (typeof p.maximum === 'number') base.maximum = p.maximum;
				break;
			case 'boolean':
				base.type = 'boolean';
				if (typeof p.default === 'boolean') base.default = p.default;
				break;
			default:
				continue;
		}
		out.push(base);
	}
	return out;
}

/**
 * formContent checks what was typed into the form (strings from text boxes, booleans from
 * check boxes) against the fields and returns the content of an "accept" answer, or the
 * problems, one per field, in words. Empty optional fields are left out.
 */
export function formContent(fields: readonly Field[], values: Record<string, unknown>): { ok: true; content: Record<string, unknown> } | { ok: false; problems: string[] } {
	const content: Record<string, unknown> = {};
	const problems: string[] = [];
	for (const f of fields) {
		const v = values[f.name];
		if (f.type === 'boolean') {
			if (typeof v === 'boolean') {
				content[f.name] = v;
			} else if (v === 'true' || v === 'false') {
				content[f.name] = v === 'true';
			} else if (f.required) {
				content[f.name] = false;
			}
			continue;
		}
		const s = typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '';
		if (s.trim() === '') {
			if (f.required) {
				problems.push(`${f.label} is required.`);
			}
			continue;
		}
		switch (f.type) {
			case 'enum':
				if (!f.options?.some((o) => o.value === s)) {
					problems.push(`${f.label} must be one of ${f.options?.map((o) => o.label).join(', ')}.`);
				} else {
					content[f.name] = s;
				}
				break;
			case 'number':
			case 'integer': {
				const n = Number(s.trim());
				if (!Number.isFinite(n) || (f.type === 'integer' && !Number.isInteger(n))) {
					problems.push(`${f.label} must be ${f.type === 'integer' ? 'a whole number' : 'a number'}.`);
				} else if (f.minimum !== undefined && n < f.minimum) {
					problems.push(`${f.label} must be at least ${f.minimum}.`);
				} else if (f.maximum !== undefined && n > f.maximum) {
					problems.push(`${f.label} must be at most ${f.maximum}.`);
				} else {
					content[f.name] = n;
				}
				break;
			}
			default:
				if (f.minLength !== undefined && s.length < f.minLength) {
					problems.push(`${f.label} must have at least ${f.minLength} characters.`);
				} else if (f.maxLength !== undefined && s.length > f.maxLength) {
					problems.push(`${f.label} must have at most ${f.maxLength} characters.`);
				} else {
					content[f.name] = s;
				}
		}
	}
	return problems.length > 0 ? { ok: false, problems } : { ok: true, content };
}
