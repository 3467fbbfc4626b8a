"""The error-message catalogs: extract, update, compile and check (domain ``contextwise``).

    python -m tools.i18n.catalogs extract   # src/ -> locales/contextwise.pot (no creation date)
    python -m tools.i18n.catalogs update    # merge into fr/zh .po (obsolete kept, changes fuzzy)
    python -m tools.i18n.catalogs compile   # .po -> .mo beside them (English fallback for the rest)
    python -m tools.i18n.catalogs check     # exit 1 when the .pot is stale or a .po is incomplete
    python -m tools.i18n.catalogs purge     # drop the obsolete (#~) entries of every domain's .po

The functions are pure where they can be (``extract_catalog``, ``render_po``, ``problems``);
``render_po`` is the reference generator's own (``contextwise_reference.po``), so that every
``.po`` file of the repository is written the same way.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Iterable
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from contextwise_reference.po import render_po as render_po  # one writer of .po text for all
from tools import generated
from tools.i18n import languages

ROOT = Path(__file__).resolve().parents[2]
LOCALES = ROOT / "locales"
SOURCE = ROOT / "src" / "contextwise"
DOMAIN = "contextwise"
KEYWORDS = {"N_": None, "NP_": (1, 2)}
HEADER = "Translations of the contextwise error messages."


def new_catalog(locale: str | None = None, domain: str = DOMAIN) -> Catalog:
    """Return an empty catalog with the project's header fields."""
    return Catalog(
        locale=languages.babel_locale(locale) if locale else None,
        domain=domain,
        project="contextwise",
        version="0.1",
        msgid_bugs_address="https://github.com/contextwise/contextwise/issues",
        copyright_holder="contextwise contributors",
        charset="utf-8",
        header_comment=f"# {HEADER}\n#",
    )


def extract_catalog(source: Path = SOURCE) -> Catalog:
    """Extract every ``N_``/``NP_`` message of the package into a template catalog."""
    catalog = new_catalog()
    found = extract_from_dir(
        str(source),
        method_map=[("**.py", "python")],
        keywords=KEYWORDS,
        comment_tags=("Translators:",),
    )
    for filename, lineno, message, comments, context in found:
        path = (source / filename).relative_to(ROOT).as_posix()
        catalog.add(
            message, locations=[(path, lineno)], auto_comments=comments, context=context
        )
    return catalog


def read_catalog(path: Path, locale: str | None = None) -> Catalog:
    """Read a ``.po`` or ``.pot`` file."""
    with path.open("rb") as handle:
        return read_po(handle, locale=languages.babel_locale(locale) if locale else None)


def merge(template: Catalog, existing: Catalog | None, locale: str) -> Catalog:
    """Merge a template into a catalog: new entries added, changed ones fuzzy, old kept."""
    catalog = existing if existing is not None else new_catalog(locale, template.domain or DOMAIN)
    catalog.update(template, no_fuzzy_matching=False, update_header_comment=False)
    catalog.fuzzy = False  # the header is written by us, not a guessed translation
    return catalog


def problems(catalog: Catalog, locale: str) -> list[str]:
    """List what keeps a catalog from release: untranslated, fuzzy, or plural forms left empty."""
    found: list[str] = []
    for message in catalog:
        if not message.id:
            continue
        label = message.id if isinstance(message.id, str) else message.id[0]
        if message.fuzzy:
            found.append(f"{locale}: fuzzy: {label!r}")
            continue
        strings = message.string if isinstance(message.string, tuple | list) else (message.string,)
        if message.pluralizable and len(strings) < catalog.num_plurals:
            filled = f"{len(strings)} of {catalog.num_plurals}"
            found.append(f"{locale}: {filled} plural forms: {label!r}")
        elif not all(strings):
            found.append(f"{locale}: untranslated: {label!r}")
    return found


def compile_catalog(catalog: Catalog, target: Path) -> bool:
    """Write the ``.mo`` of a catalog (never its fuzzy entries); return whether the file changed."""
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    data = buffer.getvalue()
    if target.is_file() and target.read_bytes() == data:
        return False
    target.write_bytes(data)
    return True


def write_if_changed(path: Path, text: str) -> bool:
    """Write a text file only when its content changes; return whether it did."""
    return bool(generated.sync({path: text}))


def po_path(locale: str, domain: str = DOMAIN) -> Path:
    """Return the path of a locale's ``.po`` file in a domain."""
    return LOCALES / locale / "LC_MESSAGES" / f"{domain}.po"


def domains() -> Iterable[str]:
    """Return the gettext domains that have a template under ``locales/``."""
    return sorted(path.stem for path in LOCALES.glob("*.pot"))


def catalog_problems(
    domain: str, root: Path = ROOT, locales: Iterable[str] | None = None
) -> list[str]:
    """What keeps a domain's catalogs from release in every translated language (or ``locales``).

    A missing catalog, a template message not merged yet, an untranslated or fuzzy entry.
    """
    pot = root / "locales" / f"{domain}.pot"
    template_ids = {m.id for m in read_catalog(pot) if m.id} if pot.is_file() else set()
    found: list[str] = []
    for locale in languages.translated() if locales is None else locales:
        path = root / "locales" / locale / "LC_MESSAGES" / f"{domain}.po"
        if not path.is_file():
            found.append(f"{path.relative_to(root)} is missing")
            continue
        catalog = read_catalog(path, locale)
        missing = template_ids - {message.id for message in catalog if message.id}
        found.extend(f"{locale}: missing: {msgid!r}" for msgid in sorted(map(str, missing)))
        found.extend(problems(catalog, locale))
    return found


def check(root: Path = ROOT) -> list[str]:
    """What keeps the error catalogs from release: a stale template, then the catalogs' problems."""
    pot = root / "locales" / f"{DOMAIN}.pot"
    found: list[str] = []
    if not pot.is_file() or pot.read_text(encoding="utf-8") != render_po(extract_catalog()):
        found.append(f"{pot.relative_to(root)} is stale: run python -m tools.i18n.catalogs extract")
    return found + catalog_problems(DOMAIN, root)


def purge(root: Path = ROOT) -> list[Path]:
    """Drop the obsolete (``#~``) entries of every catalog under ``locales/``; the paths changed."""
    changed: list[Path] = []
    for path in sorted((root / "locales").glob("*/LC_MESSAGES/*.po")):
        catalog = read_catalog(path, path.parents[1].name)
        if catalog.obsolete and write_if_changed(path, render_po(catalog, ignore_obsolete=True)):
            changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("command", choices=["extract", "update", "compile", "check", "purge"])
    args = parser.parse_args(argv)
    pot = LOCALES / f"{DOMAIN}.pot"
    if args.command == "extract":
        changed = write_if_changed(pot, render_po(extract_catalog()))
        print(f"{pot.relative_to(ROOT)}: {'written' if changed else 'unchanged'}")
        return 0
    if args.command == "update":
        template = read_catalog(pot)
        for locale in languages.translated():
            path = po_path(locale)
            existing = read_catalog(path, locale) if path.is_file() else None
            changed = write_if_changed(path, render_po(merge(template, existing, locale)))
            print(f"{path.relative_to(ROOT)}: {'written' if changed else 'unchanged'}")
        return 0
    if args.command == "purge":
        for path in purge():
            print(f"{path.relative_to(ROOT)}: purged")
        return 0
    if args.command == "compile":
        for domain in domains():
            for locale in languages.translated():
                path = po_path(locale, domain)
                if path.is_file():
                    compile_catalog(read_catalog(path, locale), path.with_suffix(".mo"))
        return 0
    found = check()
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
