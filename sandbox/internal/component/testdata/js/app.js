// A JavaScript component (componentize-js): fetch() goes out through
// wasi:http, crypto.getRandomValues through wasi:random.
export async function fetchText(url) {
	try {
		const res = await fetch(url);
		const body = await res.text();
		return `${res.status} ${body}`;
	} catch (e) {
		throw `fetch failed: ${e}`;
	}
}

export function randomBytes(n) {
	const b = new Uint8Array(n);
	crypto.getRandomValues(b);
	return b;
}
