"""Move the reference's catalogs to contexts keyed by public paths, keeping every translation.

Up to this version a text of a name that the package root exports had the context of the page's
module: ``contextwise.budget.BudgetSegment:summary``. It is now keyed by the name's public path,
``contextwise.BudgetSegment:summary``, so that the module that defines a name can become private
(``_budget``) with no moved page and no fuzzy entry. A page that stands alone (an integration)
was already keyed by its public module and does not change.

:func:`migrate` rewrites the old contexts of a catalog's entries to the new ones, keeping their
translations, flags and comments; an entry whose new context already exists keeps the better of
the two (translated and not fuzzy first). Contexts that are not old-style are left alone, so it
can run again on any catalog (a branch merged later): ``python -m tools.docs.gen_sdk_reference
migrate``, and ``update`` runs it first. A catalog that was updated before it was migrated holds
its old entries as obsolete (``#~``) and the same texts under the new contexts as new or fuzzy:
the obsolete translation is put back on its new entry, and the obsolete entry goes.
"""

from __future__ import annotations

from babel.messages.catalog import Catalog, Message

from contextwise_reference.model import Reference


def context_map(reference: Reference) -> dict[str, str]:
    """Each old object path of a name of the package root (``pkg.page.Name``) -> its public path
    (``pkg.Name``)."""
    package = reference.package
    mapping: dict[str, str] = {}
    for page in reference.pages:
        if page.namespace not in ("", package):
            continue  # a page that stands alone was keyed by its public module already
        for name in page.names:
            mapping[f"{package}.{page.slug}.{name}"] = f"{package}.{name}"
    return mapping


def new_context(context: str, mapping: dict[str, str]) -> str:
    """The public-path context of an old-style ``context``; any other context unchanged."""
    path, colon, slot = context.partition(":")
    parts = path.split(".")
    if len(parts) < 3:
        return context
    old = ".".join(parts[:3])
    if old not in mapping:
        return context
    return mapping[old] + path[len(old) :] + colon + slot


def _better(first: Message, second: Message) -> Message:
    """The entry to keep of two with the same text and context: translated, then not fuzzy."""

    def rank(message: Message) -> tuple[bool, bool]:
        string = message.string
        strings: list[str | None] = (
            list(string) if isinstance(string, list | tuple) else [string]
        )
        return all(strings), not message.fuzzy

    return second if rank(second) > rank(first) else first


def migrate(catalog: Catalog, mapping: dict[str, str]) -> int:
    """Rewrite the old-style contexts of ``catalog`` in place, keeping the order of its entries;
    return how many entries changed context."""
    entries = [message for message in catalog if message.id]
    kept: dict[tuple[object, str | None], Message] = {}
    changed = 0
    for message in entries:
        catalog.delete(message.id, context=message.context)
        if message.context:
            context = new_context(message.context, mapping)
            changed += context != message.context
            message.context = context
        key = (message.id, message.context)
        kept[key] = _better(kept[key], message) if key in kept else message
    for message in kept.values():
        catalog[message.id] = message
    return changed + _revive(catalog, mapping)


def _revive(catalog: Catalog, mapping: dict[str, str]) -> int:
    """Put the translations of old-style obsolete entries back on their new entries, where those
    are untranslated or fuzzy; return how many came back."""
    revived = 0
    for key, old in list(catalog.obsolete.items()):
        if not old.context or not old.string or old.fuzzy:
            continue
        entry = catalog.get(old.id, context=new_context(old.context, mapping))
        if entry is None or entry.context == old.context:
            continue
        if _better(entry, old) is old:
            entry.string = old.string
            entry.flags.discard("fuzzy")
            entry.previous_id = []
            del catalog.obsolete[key]
            revived += 1
    return revived


__all__ = ["context_map", "migrate", "new_context"]
