"""Gettext catalogs as the generator writes them: reproducible ``.po`` text, read and merged.

No creation or revision date is written, so a catalog changes only when its messages do.
"""

from __future__ import annotations

import io
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

from contextwise_reference import languages


def new_catalog(
    domain: str,
    locale: str | None = None,
    *,
    project: str = "PROJECT",
    version: str = "VERSION",
    bugs_address: str = "EMAIL@ADDRESS",
    header: str = "",
) -> Catalog:
    """An empty catalog of ``domain`` with the project's header fields."""
    return Catalog(
        locale=languages.babel_locale(locale) if locale else None,
        domain=domain,
        project=project,
        version=version,
        msgid_bugs_address=bugs_address,
        charset="utf-8",
        header_comment=header,
    )


def render_po(catalog: Catalog, *, ignore_obsolete: bool = False) -> str:
    """Serialize a catalog without its creation and revision dates, so output is reproducible."""
    buffer = io.BytesIO()
    write_po(
        buffer,
        catalog,
        width=100,
        sort_output=False,
        ignore_obsolete=ignore_obsolete,
        include_previous=False,
        include_lineno=False,
    )
    lines = buffer.getvalue().decode("utf-8").splitlines(keepends=True)
    dropped = ('"POT-Creation-Date:', '"PO-Revision-Date:')
    return "".join(line for line in lines if not line.startswith(dropped))


def read_catalog(path: Path, locale: str | None = None) -> Catalog:
    """Read a ``.po`` or ``.pot`` file."""
    with path.open("rb") as handle:
        return read_po(handle, locale=languages.babel_locale(locale) if locale else None)


def read(path: Path, locale: str) -> Catalog | None:
    """A locale's catalog, or None when the file does not exist."""
    return read_catalog(path, locale) if path.is_file() else None


def merge(template: Catalog, existing: Catalog | None, locale: str) -> Catalog:
    """Merge a template into a catalog: new entries added, changed ones fuzzy, old kept as ``#~``.

    Babel flags any text with ``% o`` as python-format ("2 % of the window") and its check then
    reports false errors: no text of a reference is %-formatted, so the flag is dropped.
    """
    catalog = existing
    if catalog is None:
        catalog = new_catalog(
            template.domain or "messages",
            locale,
            project=template.project,
            version=template.version,
            bugs_address=template.msgid_bugs_address,
            header=template.header_comment,
        )
    catalog.update(template, no_fuzzy_matching=False, update_header_comment=False)
    catalog.fuzzy = False  # the header is written by us, not a guessed translation
    for message in catalog:
        message.flags.discard("python-format")
    return catalog
