# SPDX-License-Identifier: Apache-2.0
"""OpenStackClient plugin for Placement, with an embedded reference server."""
