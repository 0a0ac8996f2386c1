# SPDX-License-Identifier: Apache-2.0
"""The client's only uses of cliff's, argparse's and osc-lib's private
names, for the few things they offer no public way to do.

tests/unit/test_library_seams.py checks each against the installed
library, so an upgrade that changes one fails there, and is mended here.
Imports nothing at load: the ``openstack`` shell imports the plugin, and
so this, for every command it runs.
"""


def requested_api_versions(client_manager):
    """{API name: version} asked for, as osc-lib's ClientManager holds it."""
    return client_manager._api_version


def set_version_text(parser, text):
    """Make ``--version`` print ``text``: cliff's own text starts with the
    name of whatever file started the process."""
    for action in parser._actions:
        if '--version' in action.option_strings:
            action.version = text


def name_distribution_up_front(package, distribution):
    """Tell cliff ``package``'s distribution, sparing its metadata scan; only
    where every command is ours, as others would lose "provided by"."""
    from cliff import command
    if getattr(command, '_dists_by_mods', False) is None:
        command._dists_by_mods = {package: distribution}


def command_epilog(command, provided_by=None):
    """cliff's epilog of ``command``: its own, its hooks', then the
    "provided by" line when ``provided_by`` names a distribution. cliff
    builds the same text by reading every installed distribution's
    metadata to find that name."""
    parts = [command._epilog or '']
    parts += [epilog for epilog in (hook.obj.get_epilog()
                                    for hook in command._hooks
                                    if hook.obj is not None)
              if epilog is not None]
    if provided_by:
        parts.append('This command is provided by the %s plugin.'
                     % provided_by)
    return '\n\n'.join(parts)
