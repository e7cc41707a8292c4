"""Hand-made documents where the right decision table is known (tests of grainlab compare)."""
import json
from pathlib import Path

FILLER = ("Our stores serve customers in many regions and every order is handled by a trained team "
          "that checks the item, the packaging and the paperwork before anything leaves the warehouse. ")
EVIDENCE = ("Customers may return any unopened item within 30 days of delivery for a full refund, "
            "and the refund is paid to the original card within five business days.")
POLICY_2024 = f"""# Returns policy

## Refunds

{FILLER}{EVIDENCE}

## Shipping

Orders ship within two business days from the central warehouse in Leeds.
Express delivery costs 9 pounds and arrives the next working day.
"""
POLICY_2023 = POLICY_2024.replace("30 days", "14 days").replace("five business days", "ten business days")
FAQ_HTML = """<html><head><title>FAQ</title><style>p {color: red}</style></head><body>
<h1>Frequently asked questions</h1>
<h2>Accounts</h2>
<p>To reset your password, open Settings and choose <b>Reset password</b>.</p>
<!-- internal note: the escalation code for locked accounts is ZX-42 -->
<h2>Opening hours</h2>
<ul><li>Monday to Friday: 9 to 17</li><li>Saturday: 10 to 14</li></ul>
<table><tr><th>Plan</th><th>Price</th></tr><tr><td>Basic</td><td>5 pounds</td></tr>
<tr><td>Premium</td><td>12 pounds</td></tr></table>
</body></html>
"""


def write_documents(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "policy@2024.md").write_text(POLICY_2024, encoding="utf-8")
    (folder / "policy@2023.md").write_text(POLICY_2023, encoding="utf-8")
    (folder / "faq.html").write_text(FAQ_HTML, encoding="utf-8")
    return folder


def write_questions(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path
