"""Reads ufo-batch task folders with UFO's own trajectory parser
(`../shared/ufo/ufo/trajectory/parser.py`, unmodified) and prints, for each folder, what
UFO sees: its steps, its HostAgent and AppAgent steps, the screenshots a step names
that are not there, and whether its markdown export runs. One JSON object per folder.

Usage: PYTHONPATH=../shared/ufo python read_trajectories.py FOLDER...
"""

import json
import os
import sys
import tempfile

from ufo.trajectory.parser import Trajectory

for folder in sys.argv[1:]:
    trajectory = Trajectory(folder)
    missing = []
    for step in trajectory.step_log:
        for key in Trajectory._screenshot_keys + ["desktop_screenshot_path"]:
            named = step.get(key)
            if named and named.strip():
                path = os.path.join(folder, os.path.basename(named))
                if not os.path.isfile(path):
                    missing.append(f"step {step.get('session_step')} {key}: {named}")
        for key, image in step[Trajectory._step_screenshot_key].items():
            if step.get(key) and image is None:
                missing.append(f"step {step.get('session_step')} {key}: not loaded")
    with tempfile.TemporaryDirectory() as out:
        markdown = os.path.join(out, "trajectory.md")
        trajectory.to_markdown(markdown)
        with open(markdown, encoding="utf-8") as f:
            exported = f.read()
    print(
        json.dumps(
            {
                "folder": os.path.basename(folder.rstrip("/")),
                "steps": len(trajectory.step_log),
                "host": len(trajectory.host_agent_log),
                "app": len(trajectory.app_agent_log),
                "request": trajectory.request,
                "missing": missing,
                "final": trajectory.final_screenshot_image is not None,
                "markdown": "App Agent Steps" in exported,
            }
        )
    )
