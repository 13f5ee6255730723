#!/usr/bin/env python3
"""Checks the rendered book (issue 39): every relative href and src of every HTML page leads to a
file of the book, and every #fragment to an id of the page it names.

Usage: book_links.py BOOK_DIR   (the folder `mdbook build` wrote). Exits 1, listing each broken
link with the page it is on, if any is broken.
"""
import html.parser
import os
import sys
import urllib.parse


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links = []
        self.ids = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("id", "name") and value:
                self.ids.add(value)
            if name in ("href", "src") and value is not None:
                self.links.append(value)


def parse(path):
    page = Page()
    with open(path, encoding="utf-8") as f:
        page.feed(f.read())
    return page


def main(book):
    book = os.path.abspath(book)
    pages = {}
    for folder, _, files in os.walk(book):
        for name in files:
            if name.endswith(".html"):
                path = os.path.join(folder, name)
                pages[path] = parse(path)
    if not pages:
        print(f"book_links: no HTML pages under {book}", file=sys.stderr)
        return 1
    broken = []
    checked = 0
    for path, page in sorted(pages.items()):
        # mdBook's 404 page is made to be served at the site's root (`<base href="/">`).
        if os.path.basename(path) == "404.html":
            continue
        for link in page.links:
            url = urllib.parse.urlsplit(link)
            if url.scheme or url.netloc or link.startswith("//"):
                continue  # absolute: not the book's
            checked += 1
            target = path
            if url.path:
                target = os.path.normpath(
                    os.path.join(os.path.dirname(path), urllib.parse.unquote(url.path))
                )
                if os.path.isdir(target):
                    target = os.path.join(target, "index.html")
            rel = os.path.relpath(path, book)
            if not target.startswith(book + os.sep) or not os.path.isfile(target):
                broken.append(f"{rel}: {link} (no such file in the book)")
                continue
            fragment = urllib.parse.unquote(url.fragment)
            # print.html holds every chapter; its ids are the chapters', checked there.
            if fragment and target in pages and os.path.basename(target) != "print.html":
                if fragment not in pages[target].ids:
                    broken.append(f"{rel}: {link} (no id {fragment!r} on that page)")
    for b in broken:
        print(f"broken link: {b}")
    print(f"book_links: {checked} relative links on {len(pages)} pages, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
