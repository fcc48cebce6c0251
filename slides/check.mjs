// check.mjs -- checks built decks the way a room sees them.
//
//   node check.mjs notes build/*.html    every slide has presenter notes, and no
//                                        note paragraph is hard-wrapped (no browser)
//   node check.mjs render build/*.html   renders every slide in headless Chromium
//                                        and reports any element or text past the
//                                        slide's content area or clipped inside
//                                        its box (a table over the footer, a code
//                                        line cut off at the right)
//
// Prints one line per problem, `deck.html slide N: what`, and exits 1 if there
// is any, 0 if none, 2 on a bad command line or a browser that does not start.
// CHROMIUM names the browser (default /usr/bin/chromium).

import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const SLIDE_W = 1280, SLIDE_H = 720;   // Marp's default 16:9 size
const SLACK = 1;                        // px: sub-pixel rounding is not overflow

// Every slide has a note; every note paragraph is one line in the HTML.
// Presenter view shows notes with white-space: pre-wrap, so a line break
// inside a paragraph shows as a break in the middle of a sentence.
function checkNotes(file) {
    const html = readFileSync(file, 'utf8');
    const slides = (html.match(/<svg data-marpit-svg=/g) || []).length;
    const problems = [];
    const notes = new Map();
    const re = /<div class="bespoke-marp-note" data-index="(\d+)"[^>]*>([\s\S]*?)<\/div>/g;
    for (let m; (m = re.exec(html)) !== null; )
        notes.set(Number(m[1]), m[2]);
    if (slides === 0) problems.push('no slides found (is it a Marp HTML file?)');
    for (let i = 0; i < slides; i++) {
        const note = notes.get(i);
        if (note === undefined || note.replace(/<[^>]*>/g, '').trim() === '') {
            problems.push(`slide ${i + 1}: no presenter notes`);
            continue;
        }
        // Marp keeps a note's text as written, blank lines between paragraphs.
        const paras = note.replace(/<[^>]*>/g, '').trim().split(/\n[ \t]*\n/);
        paras.forEach((p, k) => {
            if (p.trim().includes('\n'))
                problems.push(`slide ${i + 1}: note paragraph ${k + 1} is hard-wrapped ` +
                              `(write each paragraph on one line)`);
        });
    }
    return problems;
}

// Runs in the page: measures every slide, all of them made visible at once
// (the bespoke template hides all but the current one).
function measure(slack) {
    const out = [];
    const sections = document.querySelectorAll('svg[data-marpit-svg] > foreignObject > section');
    sections.forEach((sec, i) => {
        const s = sec.getBoundingClientRect();
        const cs = getComputedStyle(sec);
        const box = {
            left: s.left + parseFloat(cs.paddingLeft),
            right: s.right - parseFloat(cs.paddingRight),
            top: s.top + parseFloat(cs.paddingTop),
            bottom: s.bottom - parseFloat(cs.paddingBottom),
        };
        const name = (el) => {
            const tag = el.tagName.toLowerCase();
            const text = (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40);
            return text ? `<${tag}> "${text}"` : `<${tag}>`;
        };
        const past = (r, b) => {
            const d = [];
            if (r.right > b.right + slack) d.push(`${Math.round(r.right - b.right)}px past the right`);
            if (r.left < b.left - slack) d.push(`${Math.round(b.left - r.left)}px past the left`);
            if (r.bottom > b.bottom + slack) d.push(`${Math.round(r.bottom - b.bottom)}px past the bottom`);
            if (r.top < b.top - slack) d.push(`${Math.round(b.top - r.top)}px past the top`);
            return d.join(', ');
        };
        // One line per outermost offender: its children are past the edge too.
        const flagged = new Set();
        const inFlagged = (el) => { for (let a = el; a && a !== sec; a = a.parentElement) if (flagged.has(a)) return true; return false; };
        const report = (what) => out.push({ slide: i + 1, what });
        // header and footer live in the padding; they only must stay on the slide.
        for (const el of sec.querySelectorAll('header, footer')) {
            const d = past(el.getBoundingClientRect(), s);
            if (d) report(`${name(el)} is ${d} of the slide`);
        }
        const content = [...sec.querySelectorAll('*')].filter(
            (el) => !el.closest('header, footer'));
        for (const el of content) {
            const r = el.getBoundingClientRect();
            if ((r.width === 0 && r.height === 0) || inFlagged(el)) continue;
            const d = past(r, box);
            if (d) flagged.add(el);
            if (d) report(`${name(el)} is ${d} of the content area` +
                          (r.bottom > box.bottom + slack && sec.querySelector('footer')
                              ? ' (it covers the footer)' : ''));
            const st = getComputedStyle(el);
            if (st.overflowX !== 'visible' && el.scrollWidth > el.clientWidth + slack && !flagged.has(el))
                flagged.add(el), report(`${name(el)} cuts off ${el.scrollWidth - el.clientWidth}px of its content at the right`);
            if (st.overflowY !== 'visible' && el.scrollHeight > el.clientHeight + slack && !flagged.has(el))
                flagged.add(el), report(`${name(el)} cuts off ${el.scrollHeight - el.clientHeight}px of its content at the bottom`);
        }
        // Text directly in an element (a long line in <pre>) has no box of its own.
        const walker = document.createTreeWalker(sec, NodeFilter.SHOW_TEXT);
        for (let t; (t = walker.nextNode()) !== null; ) {
            if (!t.textContent.trim() || t.parentElement.closest('header, footer') ||
                inFlagged(t.parentElement)) continue;
            const range = document.createRange();
            range.selectNodeContents(t);
            const r = range.getBoundingClientRect();
            if (r.width === 0 && r.height === 0) continue;
            const d = past(r, box);
            if (d) report(`text "${t.textContent.trim().replace(/\s+/g, ' ').slice(0, 40)}" is ${d} of the content area`);
        }
    });
    return { count: sections.length, problems: out };
}

async function checkRender(files) {
    let puppeteer;
    try {
        puppeteer = (await import('puppeteer-core')).default;
    } catch (e) {
        console.error(`check.mjs: puppeteer-core not installed (make -C slides installs it): ${e.message}`);
        process.exit(2);
    }
    const profile = mkdtempSync(join(tmpdir(), 'slides-chromium-'));
    let browser;
    try {
        browser = await puppeteer.launch({
            executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
            headless: true,
            userDataDir: profile,
            args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                   '--disable-background-networking', '--disable-component-update',
                   '--disable-sync'],
            timeout: 60000,
        });
    } catch (e) {
        rmSync(profile, { recursive: true, force: true });
        console.error(`check.mjs: the browser did not start: ${e.message.split('\n')[0]}`);
        process.exit(2);
    }
    const problems = [];
    try {
        const page = await browser.newPage();
        await page.setViewport({ width: SLIDE_W, height: SLIDE_H });
        for (const file of files) {
            await page.goto(pathToFileURL(resolve(file)).href, { waitUntil: 'load' });
            await page.addStyleTag({ content:
                '.bespoke-marp-slide{content-visibility:visible!important;display:block!important;opacity:1!important}' +
                '.bespoke-marp-osc{display:none!important}' });
            await page.evaluate(() => document.fonts.ready);
            await page.evaluate(() => Promise.all([...document.images].map(
                (im) => im.complete ? null : new Promise((ok) => { im.onload = im.onerror = ok; }))));
            const broken = await page.evaluate(() => [...document.images]
                .filter((im) => im.naturalWidth === 0).map((im) => im.getAttribute('src')));
            for (const src of broken) problems.push(`${basename(file)}: image ${src} does not load`);
            // Marp fits a code block to its slide from a script of its own
            // (marp-pre, auto-scaling), after the page has loaded: on a busy
            // machine the first look may come before that. Look again, a few
            // frames later, while a look finds something (at most 5 looks):
            // an element that is really past its area is past it every time.
            let look = await page.evaluate(measure, SLACK);
            for (let i = 1; i < 5 && look.problems.length; i++) {
                await page.evaluate(() => new Promise((ok) =>
                    requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(ok, 100)))));
                look = await page.evaluate(measure, SLACK);
            }
            const { count, problems: found } = look;
            if (count === 0) problems.push(`${basename(file)}: no slides found`);
            for (const p of found) problems.push(`${basename(file)} slide ${p.slide}: ${p.what}`);
        }
    } finally {
        await browser.close();
        rmSync(profile, { recursive: true, force: true });
    }
    return problems;
}

const [mode, ...files] = process.argv.slice(2);
if (!['notes', 'render'].includes(mode) || files.length === 0) {
    console.error('usage: node check.mjs notes|render DECK.html...');
    process.exit(2);
}
let problems = [];
if (mode === 'notes') {
    for (const f of files) problems.push(...checkNotes(f).map((p) => `${basename(f)} ${p}`));
} else {
    problems = await checkRender(files);
}
for (const p of problems) console.log(p);
process.exit(problems.length ? 1 : 0);
