import { readFile } from 'node:fs/promises';

/**
 * Text of a PDF, page by page, through Mozilla's pdf.js (`pdfjs-dist`), an optional peer
 * dependency: the 5.x line (5.6.205) is the last that runs on Node 20; 6.x needs Node 22.
 * Without it, reading a PDF fails with a message saying what to install.
 */
export async function extractPdfText(file: string): Promise<string> {
  let pdfjs: typeof import('pdfjs-dist/legacy/build/pdf.mjs');
  try {
    pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  } catch {
    throw new Error(
      `cannot read ${file}: PDF support needs the optional package pdfjs-dist (npm install -D pdfjs-dist@5.6.205, the last line that runs on Node 20); or convert the PDF to text`,
    );
  }
  const data = new Uint8Array(await readFile(file));
  let doc;
  try {
    // verbosity 0: errors only (no font warnings: only the text is wanted).
    doc = await pdfjs.getDocument({ data, isEvalSupported: false, verbosity: 0 }).promise;
  } catch (error) {
    throw new Error(`cannot read ${file}: not a readable PDF (${(error as Error).message})`);
  }
  try {
    const pages: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const content = await (await doc.getPage(n)).getTextContent();
      let page = '';
      for (const item of content.items) {
        if (!('str' in item)) continue;
        page += item.str + (item.hasEOL ? '\n' : ' ');
      }
      pages.push(page.replace(/[ \t]+\n/g, '\n').trim());
    }
    return pages.join('\n\n');
  } finally {
    await doc.destroy();
  }
}
