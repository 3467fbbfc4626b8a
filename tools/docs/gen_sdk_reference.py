"""Generate the three-language API reference of contextwise from its sources.

    python -m tools.docs.gen_sdk_reference extract         # messages -> locales/reference.pot
    python -m tools.docs.gen_sdk_reference update          # merge the .pot into the .po files
    python -m tools.docs.gen_sdk_reference stats           # translated / fuzzy / untranslated
    python -m tools.docs.gen_sdk_reference render          # docs/<lang>/reference/*.md, the .pot
    python -m tools.docs.gen_sdk_reference render --check  # exit 1 listing stale/orphan files
    python -m tools.docs.gen_sdk_reference migrate         # old contexts -> public paths

The work is done by small pure functions in :mod:`tools.docs.sdkref`; this file is the command line.
``--root`` and ``--package`` point it at another project with the same layout (the golden tests'
fixture package). A griffe warning (a documented parameter missing from the signature, for
example) stops every subcommand with exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.docs.sdkref import catalog, migrate, project
from tools.docs.sdkref.collect import GriffeWarningsError
from tools.docs.sdkref.stats import Coverage
from tools.i18n import catalogs

STALE = "The reference is stale: run `python -m tools.docs.gen_sdk_reference render`."


def extract(target: project.Project) -> list[str]:
    state = project.load(target)
    text = catalog.render_template(state.reference, state.messages)
    written = catalogs.write_if_changed(target.pot, text)
    return [f"{target.relative(target.pot)}: {'written' if written else 'unchanged'}"]


def update(target: project.Project) -> list[str]:
    """Write the template, then merge it into each locale (obsolete kept as #~, changes fuzzy),
    after moving any old module-keyed context to its public path (see ``migrate``)."""
    lines = extract(target)
    state = project.load(target)
    template = catalog.template(state.reference, state.messages)
    mapping = migrate.context_map(state.reference)
    for locale in target.translated:
        path = target.po(locale)
        existing = state.catalogs[locale]
        if existing is not None:  # contexts of before the public paths: moved, never lost
            migrate.migrate(existing, mapping)
        merged = catalog.merge(template, existing, locale)
        written = catalogs.write_if_changed(path, catalogs.render_po(merged))
        lines.append(f"{target.relative(path)}: {'written' if written else 'unchanged'}")
    return lines


def migrate_catalogs(target: project.Project) -> list[str]:
    """Rewrite the contexts of each locale's catalog keyed by a page's module to the public paths
    of today (``contextwise.budget.BudgetSegment`` -> ``contextwise.BudgetSegment``), keeping every
    translation; then write the template. Idempotent: run it on any catalog still old-style."""
    state = project.load(target)
    mapping = migrate.context_map(state.reference)
    lines: list[str] = []
    for locale in target.translated:
        path = target.po(locale)
        found = state.catalogs[locale]
        if found is None:
            continue
        changed = migrate.migrate(found, mapping)
        written = catalogs.write_if_changed(path, catalogs.render_po(found))
        state_word = "written" if written else "unchanged"
        lines.append(f"{target.relative(path)}: {changed} contexts moved, {state_word}")
    return lines + extract(target)


def stats_lines(coverage: list[Coverage], pages: list[str]) -> list[str]:
    """The coverage table: per page first, then the totals (the last lines, for ``tail``)."""
    width = max([len(page) for page in pages] + [12])
    lines = ["page".ljust(width) + "".join(f"  {c.locale:>8}" for c in coverage)]
    for page in pages:
        cells = "".join(
            f"  {c.pages[page].ratio:>7.1%}" if page in c.pages else f"  {'-':>8}" for c in coverage
        )
        lines.append(page.ljust(width) + cells)
    lines.append("")
    lines.append("locale  translated  fuzzy  untranslated  total  coverage")
    for c in coverage:
        t = c.total
        lines.append(
            f"{c.locale:<6}  {t.translated:>10}  {t.fuzzy:>5}  {t.untranslated:>12}  {t.total:>5}"
            f"  {t.ratio:>8.1%}"
        )
    met = all(c.releasable for c in coverage)
    lines.append(f"release rule (100 % translated, 0 fuzzy): {'met' if met else 'not met'}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--root", type=Path, default=project.ROOT, help="the project's folder")
    parser.add_argument("--package", default="contextwise", help="the package to document")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("extract", help="write locales/reference.pot")
    commands.add_parser("update", help="merge the template into the fr and zh catalogs")
    stats = commands.add_parser("stats", help="print the translation coverage")
    stats.add_argument(
        "--strict", action="store_true", help="exit 1 unless every locale is 100 %% translated"
    )
    render = commands.add_parser("render", help="write the reference pages")
    render.add_argument("--check", action="store_true", help="change nothing; exit 1 if stale")
    commands.add_parser(
        "migrate", help="rewrite old module-keyed contexts of the catalogs to public paths"
    )
    args = parser.parse_args(argv)
    target = project.Project(root=args.root.resolve(), package=args.package)
    try:
        if args.command == "extract":
            lines = extract(target)
        elif args.command == "update":
            lines = update(target)
        elif args.command == "migrate":
            lines = migrate_catalogs(target)
        elif args.command == "stats":
            state = project.load(target)
            pages = [page.slug for page in state.reference.pages] + ["label"]
            print("\n".join(stats_lines(state.coverage, pages)))
            return 1 if args.strict and not all(c.releasable for c in state.coverage) else 0
        else:
            _, files = project.generate(target)
            if args.check:
                problems = project.check(target, files)
                if problems:
                    print("\n".join([*problems, STALE]))
                return 1 if problems else 0
            lines = project.write(target, files) or ["the reference is up to date"]
    except GriffeWarningsError as error:
        print(error, file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
