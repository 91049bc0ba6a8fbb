#!/usr/bin/env python3
"""Checks ufo-batch's ATIF trajectories and Harbor jobs with Harbor's own code (harbor
0.25.0, the venv of scripts/setup-harbor.sh), not with a copy of its schema:

    python harbor-check.py trajectory FILE...   Harbor's TrajectoryValidator on each file
                                                (its pydantic model, the cross-field rules,
                                                every image referenced exists)
    python harbor-check.py job JOB_DIR          JobConfig and JobResult of the job, and
                                                TrialConfig, TrialResult and the trajectory
                                                of each trial

Prints one JSON object: {"checked": N, "errors": {"what": ["error", ...]}}; exit 0.
"""
import json
import sys
from pathlib import Path

from harbor.models.job.config import JobConfig
from harbor.models.job.result import JobResult
from harbor.models.trial.config import TrialConfig
from harbor.models.trial.result import TrialResult
from harbor.utils.trajectory_validator import TrajectoryValidator


def trajectory_errors(path):
    validator = TrajectoryValidator()
    if not Path(path).is_file():
        return [f"{path} does not exist"]
    if validator.validate(Path(path)):
        return []
    return validator.get_errors() or ["invalid"]


def model_errors(model, path):
    try:
        model.model_validate_json(Path(path).read_text())
        return []
    except Exception as e:  # pydantic's ValidationError, or a file that is not there
        return [str(e)]


def main():
    kind, paths = sys.argv[1], sys.argv[2:]
    errors, checked = {}, 0
    if kind == "trajectory":
        for p in paths:
            checked += 1
            errors[p] = trajectory_errors(p)
    else:
        job = Path(paths[0])
        for name, model in [("config.json", JobConfig), ("result.json", JobResult)]:
            checked += 1
            errors[str(job / name)] = model_errors(model, job / name)
        for trial in sorted(p for p in job.iterdir() if p.is_dir()):
            for name, model in [("config.json", TrialConfig), ("result.json", TrialResult)]:
                checked += 1
                errors[str(trial / name)] = model_errors(model, trial / name)
            checked += 1
            traj = trial / "agent" / "trajectory.json"
            errors[str(traj)] = trajectory_errors(traj)
    print(json.dumps({"checked": checked, "errors": {k: v for k, v in errors.items() if v}}))


if __name__ == "__main__":
    main()
