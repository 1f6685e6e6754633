"""Schemathesis hook: a staff access token for every request, renewed before its five minutes run out."""
import os

import requests
import schemathesis

BASE_URL = os.environ["FUZZ_BASE_URL"]


@schemathesis.auth(refresh_interval=240)
class StaffToken:
    def get(self, case, context):
        response = requests.post(
            f"{BASE_URL}/authentication/create",
            json={"username": os.environ["FUZZ_USERNAME"], "password": os.environ["FUZZ_PASSWORD"]},
            timeout=30,
        )
        response.raise_for_status()
        return response.json()["access"]

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"
