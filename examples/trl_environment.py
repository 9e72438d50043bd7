"""RL training entry point: both environments in the shape TRL's `GRPOTrainer(environment_factory=...)` expects.

TRL builds one instance per rollout with no arguments, calls `reset(**row)` with the
dataset row's columns (`task_id` and `seed` are used here, the rest ignored) and puts
the returned task text in front of the model, exposes every other public method as a
function-calling tool (its schema comes from the type hints and the docstring's Args:),
and reads `env.reward` in the reward function after the episode.

* `ServiceBenchToolEnv`: one tool per endpoint of the catalogue (`lookup_user`,
  `lookup_order`, `process_refund`, ...). TRL's guidance is one descriptively named,
  typed tool per action rather than a generic `step(action)`, so the model learns the
  API surface from the tool schemas themselves.
* `SupportQueueToolEnv`: one `triage(...)` tool, the whole decision for the current ticket.

Both use the project's OpenEnv clients (client.py): one WebSocket per instance, opened on
the first reset and reused, to $ENV_BASE_URL (default http://localhost:8000). `reward` is
the episode's running score in [0, 1], the sum of its step rewards so far.

    uv run --with trl --with datasets python examples/trl_environment.py --env servicebench
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from openenv.core.client_types import StepResult
from websockets.exceptions import ConnectionClosed

from servicebench_support_queue.client import ServiceBenchEnv, SupportQueueEnv
from servicebench_support_queue.models import (
    Disposition,
    Priority,
    Queue,
    ServiceBenchAction,
    ServiceBenchObservation,
    SupportQueueAction,
    SupportQueueObservation,
)

DEFAULT_ENV_BASE_URL = "http://localhost:8000"


def env_base_url() -> str:
    """The server the environments talk to: $ENV_BASE_URL, as inference.py reads it."""
    return os.environ.get("ENV_BASE_URL", "").strip().rstrip("/") or DEFAULT_ENV_BASE_URL


def _reset_options(row: dict[str, Any]) -> dict[str, Any]:
    """The reset parameters a dataset row carries; other columns are the trainer's."""
    return {key: row[key] for key in ("task_id", "seed") if row.get(key) is not None}


class _EpisodeTools:
    """Shared bookkeeping: the client, the running reward and the done guard (all private or data)."""

    _client_type: type = ServiceBenchEnv

    def __init__(self) -> None:
        self.reward = 0.0
        self.done = False
        self.task_id = ""
        self._client: Any = None
        self._running = False

    def _reset(self, row: dict[str, Any]) -> Any:
        """Start an episode over this instance's connection (reconnecting once if it dropped)."""
        self.reward, self.done, self._running = 0.0, False, False
        for attempt in (1, 2):
            if self._client is None:
                self._client = self._client_type(base_url=env_base_url()).sync()
            try:
                result = self._client.reset(**_reset_options(row))
                break
            except (ConnectionError, ConnectionClosed, OSError):  # e.g. the server restarted
                self._close()
                if attempt == 2:
                    raise
        self.task_id, self._running = result.observation.task_id, True
        return result.observation

    def _step(self, action: Any) -> Any:
        if not self._running:
            raise ValueError("No episode is running: the trainer calls reset() first.")
        if self.done:
            raise ValueError("The episode is over: stop calling tools.")
        try:
            result: StepResult[Any] = self._client.step(action)
        except RuntimeError as exc:  # the server refused the action (e.g. a value out of range)
            raise ValueError(str(exc)) from None
        self.reward, self.done = result.observation.cumulative_reward, result.done
        return result.observation

    def _close(self) -> None:
        if self._client is not None:
            try:
                self._client.close()
            finally:
                self._client = None


# ----------------------------------------------------------------------------- ServiceBench


class ServiceBenchToolEnv(_EpisodeTools):
    """ServiceBench for TRL: resolve a customer request by calling user, order and inventory APIs."""

    _client_type = ServiceBenchEnv

    def reset(self, **kwargs: Any) -> str:
        """Start the row's task (`task_id`, `seed`; default: the first task) and return its text."""
        observation: ServiceBenchObservation = self._reset(kwargs)
        budget = observation.info.get("max_steps")
        return (
            f"{observation.task_description}\n\nUse the service tools; every call is one step "
            f"(at most {budget}). The episode ends when the task is complete."
        )

    def _call(self, service: str, endpoint: str, method: str, **params: Any) -> str:
        action = ServiceBenchAction(
            service=service,
            endpoint=endpoint,
            method=method,
            params={k: v for k, v in params.items() if v is not None},
        )
        observation: ServiceBenchObservation = self._step(action)
        return json.dumps(
            {
                "call": f"{method} {service} {endpoint}",
                "status_code": observation.api_response.get("status_code"),
                "response": observation.api_response.get("data"),
                "error": observation.error_message,
                "task_completed": observation.task_completed,
                "episode_done": observation.done,
            }
        )

    def lookup_user(self, email: str | None = None, user_id: str | None = None) -> str:
        """Look up a customer by email or by user ID (give at least one).

        Args:
            email: The customer's email address, e.g. jane.doe@example.com.
            user_id: The user ID, e.g. USR-001.
        """
        return self._call("user", "/users/lookup", "GET", email=email, user_id=user_id)

    def list_users(self, page: int = 1, per_page: int = 5) -> str:
        """List customers, a page at a time.

        Args:
            page: Page number, starting at 1.
            per_page: Users per page, 1 to 5.
        """
        return self._call("user", "/users/list", "GET", page=page, per_page=per_page)

    def update_user(self, user_id: str, updates: dict[str, str]) -> str:
        """Change fields of a customer's profile.

        Args:
            user_id: The user ID to update.
            updates: Fields to change (name, email, phone, address, notes) and their new values.
        """
        return self._call("user", "/users/update", "POST", user_id=user_id, updates=updates)

    def lookup_order(self, order_id: str) -> str:
        """Look up one order: status, line items, coupon, amount charged and refunds.

        Args:
            order_id: The order ID, e.g. ORD-1005.
        """
        return self._call("order", "/orders/lookup", "GET", order_id=order_id)

    def list_user_orders(self, user_id: str) -> str:
        """List the orders a customer placed, as summaries.

        Args:
            user_id: The user ID whose orders to list.
        """
        return self._call("order", "/orders/by-user", "GET", user_id=user_id)

    def update_order_status(self, order_id: str, new_status: str) -> str:
        """Move an order to a new status (only along allowed transitions).

        Args:
            order_id: The order ID to change.
            new_status: One of pending, processing, shipped, delivered, returned, cancelled, refunded.
        """
        return self._call(
            "order", "/orders/update-status", "POST", order_id=order_id, new_status=new_status
        )

    def process_refund(self, order_id: str, amount: float, reason: str) -> str:
        """Refund part of an order's charge.

        Args:
            order_id: The order ID to refund.
            amount: Amount in USD, positive, whole cents, at most what is still refundable.
            reason: Why the refund is issued (kept on the order).
        """
        return self._call(
            "order",
            "/orders/process-refund",
            "POST",
            order_id=order_id,
            amount=amount,
            reason=reason,
        )

    def lookup_product(self, sku: str) -> str:
        """Look up a product: name, category, list price and stock.

        Args:
            sku: The product SKU, e.g. SKU-445.
        """
        return self._call("inventory", "/inventory/lookup", "GET", sku=sku)

    def check_stock(self, sku: str) -> str:
        """Current stock level of a product.

        Args:
            sku: The product SKU.
        """
        return self._call("inventory", "/inventory/check-stock", "GET", sku=sku)

    def price_history(self, sku: str) -> str:
        """A product's list-price changes, oldest first.

        Args:
            sku: The product SKU.
        """
        return self._call("inventory", "/inventory/price-history", "GET", sku=sku)

    def update_stock(self, sku: str, adjustment: int) -> str:
        """Add or remove units of stock.

        Args:
            sku: The product SKU.
            adjustment: Units to add (positive) or remove (negative), never zero.
        """
        return self._call(
            "inventory", "/inventory/update-stock", "POST", sku=sku, adjustment=adjustment
        )


# ----------------------------------------------------------------------------- Support Queue


def _ticket_text(observation: SupportQueueObservation) -> str:
    ticket = observation.ticket
    if ticket is None:
        return "No ticket left."
    events = "".join(f"\n  - {event}" for event in ticket.recent_events) or " none"
    return (
        f"Ticket {observation.current_index + 1} of {observation.total_tickets}: {ticket.ticket_id}\n"
        f"Subject: {ticket.subject}\nCustomer tier: {ticket.customer_tier}; product area: "
        f"{ticket.product_area}; SLA: {ticket.sla_hours:g} h\nRecent events:{events}\n\n{ticket.body}"
    )


class SupportQueueToolEnv(_EpisodeTools):
    """Support Queue for TRL: triage each ticket of the queue with one `triage` call."""

    _client_type = SupportQueueEnv

    def reset(self, **kwargs: Any) -> str:
        """Start the row's task (`task_id`, `seed`; default: the first task) and return the first ticket."""
        observation: SupportQueueObservation = self._reset(kwargs)
        return f"{observation.instructions}\n\nCall triage once per ticket.\n\n{_ticket_text(observation)}"

    def triage(
        self,
        priority: Priority,
        queue: Queue,
        disposition: Disposition,
        summary: str,
        response: str,
        confidence: float = 0.5,
    ) -> str:
        """Submit the triage decision for the current ticket; the next ticket follows.

        Args:
            priority: Urgency, P1 (most urgent) to P4.
            queue: The team that owns the ticket.
            disposition: The next action: respond, request_info, escalate or close.
            summary: A short internal triage note naming the key facts.
            response: The first reply to the customer: accurate, safe, no promises you cannot keep.
            confidence: How sure you are of this decision, 0 to 1.
        """
        action = SupportQueueAction(
            priority=priority,
            queue=queue,
            disposition=disposition,
            summary=summary,
            response=response,
            confidence=confidence,
        )
        observation: SupportQueueObservation = self._step(action)
        feedback = json.dumps(observation.last_feedback or {})
        upcoming = "The queue is done." if observation.done else _ticket_text(observation)
        return f"Feedback on that ticket: {feedback}\n\n{upcoming}"


def reward_from_env(environments: list[_EpisodeTools], **kwargs: Any) -> list[float]:
    """GRPO reward function: each rollout's episode score, read off its environment."""
    return [env.reward for env in environments]


def main() -> None:
    """Train a small model with GRPO on one environment (needs `trl`, `datasets` and a GPU)."""
    from datasets import Dataset  # imported here: the classes above need neither
    from trl import GRPOConfig, GRPOTrainer

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--env", choices=("servicebench", "support_queue"), default="servicebench")
    parser.add_argument("--model", default="Qwen/Qwen3-0.6B")
    parser.add_argument("--task-id", action="append", help="task ids to train on (default: all)")
    parser.add_argument("--rows", type=int, default=256)
    args = parser.parse_args()
    factory = ServiceBenchToolEnv if args.env == "servicebench" else SupportQueueToolEnv
    tasks = args.task_id or [None]
    instruction = "You are an operations agent. Use the tools to finish the task you are given."
    dataset = Dataset.from_dict(
        {
            "prompt": [[{"role": "user", "content": instruction}]] * args.rows,
            "task_id": [tasks[i % len(tasks)] for i in range(args.rows)],
            "seed": list(range(args.rows)),
        }
    )
    trainer = GRPOTrainer(
        model=args.model,
        reward_funcs=reward_from_env,
        train_dataset=dataset,
        environment_factory=factory,
        args=GRPOConfig(
            max_completion_length=4096,
            log_completions=True,
            chat_template_kwargs={"enable_thinking": False},
        ),
    )
    trainer.train()


if __name__ == "__main__":
    main()
