# SPDX-License-Identifier: Apache-2.0
"""``placement-server`` in any install, the server's extra or not.

pip installs every console script of a distribution whatever extras were
asked for, so ``pip install osc-placement`` (the client alone) installs
``placement-server`` too. This entry point imports nothing beyond the
standard library until it knows the ``[server]`` extra is there; without
it, ``--help`` still answers and anything else says which command installs
the extra, instead of failing on an import.
"""

import importlib.metadata
import re
import sys
import textwrap

DISTRIBUTION = 'osc-placement'
EXTRA = 'server'
INSTALL_EXTRA = "pip install 'osc-placement[server]'"
PROG = 'placement-server'
USAGE = ('usage: placement-server [options] '
         '[serve | db sync | db version | db hand-back]')
DESCRIPTION = 'Embedded OpenStack Placement API server.'
# Exit status when the extra is missing: the command did not run.
EXIT_MISSING_EXTRA = 1
HELP_OPTIONS = ('-h', '--help')

_EXTRA_MARKER = re.compile(r'extra\s*==\s*[\'"]%s[\'"]' % EXTRA)
_NAME = re.compile(r'[A-Za-z0-9][A-Za-z0-9._-]*')


def extra_requirements(requires):
    """The distribution names the ``[server]`` extra asks for, from
    ``Requires-Dist`` lines."""
    names = []
    for line in requires or ():
        requirement, _, marker = line.partition(';')
        if _EXTRA_MARKER.search(marker):
            names.append(_NAME.match(requirement.strip()).group())
    return names


def _installed(name):
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def missing_requirements():
    """The ``[server]`` extra's distributions not installed; empty when
    osc-placement itself has no metadata (run from a source tree), where
    the import below is the only check."""
    try:
        requires = importlib.metadata.requires(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return []
    return [name for name in extra_requirements(requires)
            if not _installed(name)]


def explain_missing(missing, wants_help):
    """What to say when the extra is missing: a short help for
    ``--help``, else the command that installs it."""
    needed = textwrap.fill(
        'The server needs the [server] extra of osc-placement, which is '
        'not installed here (missing: %s). Install it with:'
        % ', '.join(missing), width=79)
    text = '%s\n\n    %s\n' % (needed, INSTALL_EXTRA)
    if wants_help:
        return '%s\n\n%s\n\n%s\nthen "%s --help" lists every option.\n' % (
            USAGE, DESCRIPTION, text, PROG)
    return '%s: %s' % (PROG, text)


def _load_server_main():
    """cmd.main, or the name of the module an import lacked."""
    try:
        from osc_placement.server import cmd
    except ModuleNotFoundError as exc:
        if (exc.name or '').partition('.')[0] == 'osc_placement':
            raise
        return None, exc.name
    return cmd.main, None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    wants_help = any(arg in HELP_OPTIONS for arg in argv)
    missing = missing_requirements()
    server_main = None
    if not missing:
        server_main, missing_module = _load_server_main()
        if server_main is None:
            missing = [missing_module]
    if missing:
        out = sys.stdout if wants_help else sys.stderr
        out.write(explain_missing(missing, wants_help))
        return 0 if wants_help else EXIT_MISSING_EXTRA
    return server_main(argv)
