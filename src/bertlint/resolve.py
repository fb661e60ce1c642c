"""The release of a library the project leaves unpinned, as a resolver installing the project's pins would take it.

For datasets, huggingface_hub, trl, peft and accelerate when the project pins no release of it (`target` step 4): the
newest minor release whose own requirements (its wheels' `Requires-Dist`, data/admits.json) admit every release the
project pins of transformers and of those libraries, within what those pinned releases require of it (transformers':
data/requires.json, by minor; the others': data/admits.json, the release it lists). A project pinned to transformers
4.39.3 gets trl 0.12 (0.13 requires transformers>=4.46); pinned to accelerate 0.28.0 too, trl 0.10 (0.12 requires
accelerate>=0.34, 0.11 transformers>=4.40). Where the table cannot tell of the other pins (a minor it could not read
met first), transformers' pin alone decides, as before they counted; where it cannot tell of that either, only the
ceiling transformers requires: never a more specific release than the table shows.
"""

from __future__ import annotations

from bertlint.versions import Unknown, Version, bounded_by, latest, newest_admitting, required_by, requirement_of, resolve_specifier, satisfies, show

Pin = tuple[Version, str]  # (the release, where that came from)


def unpinned(library: str, pins: dict[str, Pin], installed: Pin | None) -> Pin | None:
    """The release of `library` a resolver takes for the project's pinned releases `pins` (package -> pin), with where
    that came from: `installed` (the one where the project runs) where it fits them, else the newest that does; None
    where nothing bounds it (nothing pinned, or only lower bounds that its newest release meets)."""
    known = {package: pin for package, pin in pins.items() if not isinstance(pin[0], Unknown)}
    for pinned in (known, {package: pin for package, pin in known.items() if package == "transformers"}):
        if not pinned:
            return None
        bounds = {package: spec for package, pin in pinned.items() if (spec := _required(package, pin[0], library))}
        spec = ",".join(bounds.values())
        bounded = resolve_specifier(spec, library) if spec else None  # None: `>=0.11` alone sets no ceiling
        ceiling = bounded or latest(library)
        bounding = {package: pin for package, pin in pinned.items() if package in bounded_by(library)}  # the others admit every release
        found = newest_admitting(library, tuple((package, pin[0]) for package, pin in sorted(bounding.items())), ceiling, spec)
        if found is not None or pinned.keys() <= {"transformers"}:
            break
    if found is None or found[0][:2] == ceiling[:2] or not bounding:
        return within(library, spec, installed, "; ".join(_which(library, bounds, pinned, sourced=True))) if spec else None
    if installed is not None and (not spec or satisfies(spec, installed[0])) and admits(library, installed[0], bounding):
        return installed
    named = ", ".join(f"{package}{requires}" for package, requires in found[1].items())
    own = f"own requirement {named} admits" if len(found[1]) == 1 else " ".join(filter(None, ("own requirements", named, "admit")))
    admitted = " and ".join(f"{package} {show(pin[0])} ({pin[1]})" for package, pin in bounding.items())
    ceilings = "".join(f"; within {which}" for which in _which(library, bounds, pinned, sourced=False)) if bounded else ""
    return found[0], f"{library} {show(found[0])}, the newest release whose {own} {admitted}{ceilings}"


def within(library: str, spec: str, installed: Pin | None, why: str) -> Pin | None:
    """The release of `library` a resolver takes for `spec`, which the project's pins require (`why` says which): the
    installed one where it fits, else the newest the specifier allows; None where it sets no ceiling (`>=0.11` alone)."""
    newest = resolve_specifier(spec, library)
    if newest is None:
        return None
    if installed is not None and satisfies(spec, installed[0]):
        return installed
    return newest, why


def admits(library: str, release: Version, pins: dict[str, Pin]) -> bool:
    """Do the `library` release's own requirements admit every pinned release of `pins`? True where `data/admits.json`
    cannot tell."""
    found = newest_admitting(library, tuple((package, pin[0]) for package, pin in sorted(pins.items())), release)
    return found is None or found[0][:2] == release[:2]


def _required(package: str, release: Version, library: str) -> str | None:
    """What the pinned release `package`==`release` requires of `library`: transformers' by its minor (requires.json),
    another's where admits.json lists that release."""
    return required_by(release, library) if package == "transformers" else requirement_of(package, release, library)


def _which(library: str, bounds: dict[str, str], pins: dict[str, Pin], sourced: bool) -> list[str]:
    """`trl<0.12, which transformers 4.39 requires` for each pinned package that bounds `library`, with its pin's source
    where `sourced`."""
    said = []
    for package, spec in bounds.items():
        release = pins[package][0]
        shown = f"{release[0]}.{release[1]}" if package == "transformers" else show(release)
        said.append(f"{library}{spec}, which {package} {shown} requires" + (f" ({pins[package][1]})" if sourced else ""))
    return said
