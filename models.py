"""Typed actions, observations and states of both environments.

These are the wire types of the server and the client: every other module
imports from here, and this module imports nothing of the project's but
read_only_json.py (the shared endpoint catalogue is a read-only list).
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidatorFunctionWrapHandler, WrapValidator

from .openenv_types import Action, Observation, State
from .read_only_json import ReadOnlyList


def _share_read_only(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """Keep a shared read-only value as it is (validating would copy it); check anything else."""
    return value if type(value) is ReadOnlyList else handler(value)


EnvName = Literal["servicebench", "support_queue"]
Difficulty = Literal["easy", "medium", "hard"]
MAX_STEP_INDEX = 2**31 - 1
"""The largest `step_index` (the number of a step, from 1) a client may send, on any transport."""


class TaskCard(BaseModel):
    """What `/tasks` lists for one task, and what a state carries as its task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    env: EnvName
    title: str
    difficulty: Difficulty
    description: str
    max_steps: int = Field(description="Step budget: the episode ends when it is spent.")
    alias: int | None = Field(
        default=None, description="Integer alias accepted as task_id (ServiceBench only)."
    )


class EpisodeObservation(Observation):
    """Fields every observation of this server carries besides OpenEnv's own."""

    task_id: str = ""
    cumulative_reward: float = Field(default=0.0, description="Running episode score in [0, 1].")
    info: dict[str, Any] = Field(
        default_factory=dict, description="Extra metadata, e.g. episode_id and step."
    )


class EpisodeState(State):
    """Fields every state of this server carries besides OpenEnv's own."""

    env: str = ""
    task: TaskCard | None = None
    seed: int | None = None
    split: str | None = Field(
        default=None, description="The Task API split of the reset (None: reset by task and seed)."
    )
    index: int | None = Field(default=None, description="The task's index in `split`.")
    done: bool = False
    cumulative_reward: float = 0.0


# --------------------------------------------------------------------------- ServiceBench

HttpMethod = Literal["GET", "POST", "PUT"]


class ServiceBenchAction(Action):
    """One API call against one of the three in-process services."""

    service: str = Field(description='"user" | "order" | "inventory"')
    endpoint: str = Field(description='API path, e.g. "/users/lookup"')
    method: str = Field(default="GET", description='"GET" | "POST" | "PUT"')
    params: dict[str, Any] = Field(default_factory=dict, description="Endpoint-specific parameters")


class EndpointSpec(BaseModel):
    """One row of the endpoint catalogue shown to the agent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    service: str
    endpoint: str
    method: HttpMethod
    tool: str = Field(description="The endpoint's tool name (MCP tools, GET /tools).")
    description: str
    params: dict[str, dict[str, Any]] = Field(
        description="Parameter name -> {type, required, description, default?, minimum?, "
        "maximum?, enum? (the closed set of values), fields? (an object's settable fields)}"
    )


class ServiceBenchObservation(EpisodeObservation):
    task_description: str = ""
    policy: str = Field(
        default="",
        description="The support policy the request is resolved under (refund window and "
        "limit, when to escalate or decline, what to verify before any write); the expected "
        "end state follows from it.",
    )
    api_response: dict[str, Any] = Field(default_factory=dict)
    success: bool = True
    error_message: str | None = None
    available_endpoints: Annotated[list[dict[str, Any]], WrapValidator(_share_read_only)] = Field(
        default_factory=list,
        description="The endpoint catalogue; in-process it is one shared, read-only list.",
    )
    task_completed: bool = False


class CallRecord(BaseModel):
    """One call of a ServiceBench episode, as kept in its state."""

    model_config = ConfigDict(extra="forbid")

    step: int
    service: str
    endpoint: str
    method: str
    params: dict[str, Any]
    status_code: int
    reward: float
    signals: list[str] = Field(description="Reward-table rows this call triggered.")


class WorldChange(BaseModel):
    """One field of one record that the episode changed: before -> after."""

    model_config = ConfigDict(extra="forbid")

    table: str = Field(description='"users" | "orders" | "products"')
    key: str = Field(description="The record's id (user id, order id or SKU).")
    field: str
    before: Any = Field(description="The value at reset (null: the field did not exist).")
    after: Any


class OutcomeCheck(BaseModel):
    """One write the task intends, compared with the world as it stands."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description='"refunded_in_episode" or "status"')
    record: str = Field(description='Which record, e.g. "orders/ORD-1009".')
    expected: Any = Field(description="What the task's end state holds (an amount: exact cents).")
    actual: Any
    met: bool


class EpisodeOutcome(BaseModel):
    """The final-state check: the world against the task's expected end state.

    The expected end state is the reset world plus exactly the task's intended writes;
    every other change is collateral damage.
    """

    model_config = ConfigDict(extra="forbid")

    end_state_matches: bool = Field(
        default=True, description="Every check met and no collateral damage."
    )
    checks: list[OutcomeCheck] = Field(default_factory=list)
    intended_changes: list[WorldChange] = Field(default_factory=list)
    collateral_damage: list[WorldChange] = Field(
        default_factory=list, description="Every change the task does not intend."
    )


FaultLevel = Literal["off", "light", "heavy"]
FaultKind = Literal["unavailable", "rate_limited", "timeout", "stale_read"]


class FaultRecord(BaseModel):
    """One fault the episode's services answered with (server/servicebench/faults/schedule.py)."""

    model_config = ConfigDict(extra="forbid")

    step: int = Field(description="The step whose call the fault answered.")
    kind: FaultKind = Field(
        description='"unavailable" (503), "rate_limited" (429), "timeout" (504) or '
        '"stale_read" (200 with the record as it was before the last write)'
    )
    service: str
    endpoint: str
    applied: bool | None = Field(
        default=None,
        description="A timeout on a write: whether the write was applied. Null until the "
        "episode is done (before, only a lookup tells), and for every other fault.",
    )


def _absent(value: Any) -> bool:
    return value is None


class ServiceBenchState(EpisodeState):
    fault_level: FaultLevel | None = Field(
        default=None,
        exclude_if=_absent,
        description='The reset\'s `faults` level; absent when "off" (the state is then as it '
        "was before faults existed).",
    )
    faults: list[FaultRecord] | None = Field(
        default=None,
        exclude_if=_absent,
        description="The faults injected so far (absent when faults are off). A stale read is "
        "silent, like the timeout's outcome: both are listed once the episode is done.",
    )
    task_description: str = ""
    task_completed: bool = False
    milestones: list[str] = Field(default_factory=list)
    penalty_balance: float = Field(
        default=0.0,
        description="Penalties taken while the score was 0, still to be repaid "
        "by later gains before the score rises again.",
    )
    outcome: EpisodeOutcome | None = Field(
        default=None,
        description="The end-state check, once the episode is done; null before, since it "
        "shows the expected end state (the refund the grader wants), i.e. the answer.",
    )
    call_history: list[CallRecord] = Field(default_factory=list)


# --------------------------------------------------------------------------- Support Queue

Priority = Literal["P1", "P2", "P3", "P4"]
Queue = Literal["billing", "security", "technical", "success", "trust_safety"]
Disposition = Literal["respond", "request_info", "escalate", "close"]

PRIORITIES: tuple[str, ...] = ("P1", "P2", "P3", "P4")
QUEUES: tuple[str, ...] = ("billing", "security", "technical", "success", "trust_safety")
DISPOSITIONS: tuple[str, ...] = ("respond", "request_info", "escalate", "close")

TEXT_FIELD_MAX_CHARS = 4000


class SupportQueueAction(Action):
    """The triage decision for the current ticket."""

    TOOL_NAME: ClassVar[str] = "triage"
    """The name of this action's tool (MCP tools, GET /tools)."""

    priority: Priority = Field(description="How urgent: P1 (most urgent) to P4")
    queue: Queue = Field(description="The team that takes the ticket")
    disposition: Disposition = Field(description="What happens next with the ticket")
    summary: str = Field(
        default="",
        max_length=TEXT_FIELD_MAX_CHARS,
        description="Short internal triage note (over 60 words earns no coverage)",
    )
    response: str = Field(
        default="",
        max_length=TEXT_FIELD_MAX_CHARS,
        description="First customer-facing reply (over 150 words earns no coverage)",
    )
    confidence: float = Field(
        default=0.5, ge=0.0, le=1.0, description="How sure you are of this decision"
    )


class Ticket(BaseModel):
    """The customer ticket payload, exactly what the agent sees."""

    model_config = ConfigDict(extra="forbid")

    ticket_id: str
    subject: str
    body: str
    customer_tier: str
    product_area: str
    sla_hours: float
    recent_events: list[str] = Field(default_factory=list)


class SupportQueueObservation(EpisodeObservation):
    task_title: str = ""
    difficulty: str = ""
    instructions: str = ""
    current_index: int = 0
    total_tickets: int = 0
    ticket: Ticket | None = None
    allowed_priorities: list[str] = Field(default_factory=lambda: list(PRIORITIES))
    allowed_queues: list[str] = Field(default_factory=lambda: list(QUEUES))
    allowed_dispositions: list[str] = Field(default_factory=lambda: list(DISPOSITIONS))
    scoring_weights: dict[str, float] = Field(default_factory=dict)
    last_feedback: dict[str, Any] | None = None
    cumulative_reward: float = Field(
        default=0.0,
        description="Running SUM of ticket rewards (0..total_tickets); the episode score "
        "in [0, 1] is info['average_reward'].",
    )


class SupportQueueState(EpisodeState):
    current_index: int = 0
    total_tickets: int = 0
    cumulative_reward: float = Field(
        default=0.0, description="Running SUM of ticket rewards (0..total_tickets)."
    )
    average_reward: float = Field(
        default=0.0,
        description="Episode score: mean reward of the tickets graded so far, in [0, 1].",
    )
    penalty_balance: float = Field(
        default=0.0,
        description="Unsafe-reply penalties taken while the running sum was 0, still to be "
        "repaid by later tickets' gains before the score rises again.",
    )
    processed_ticket_ids: list[str] = Field(default_factory=list)
    action_history: list[dict[str, Any]] = Field(default_factory=list)
    grading_history: list[dict[str, Any]] = Field(default_factory=list)
