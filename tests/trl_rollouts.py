"""Whole rollouts of examples/trl_environment.py through TRL's own GRPOTrainer, without training.

Run in a virtual environment that has `trl` (and torch) installed, with a live server at
$ENV_BASE_URL; prints one JSON document (see `main`) that tests/test_trl_example.py checks.

Everything is TRL's code but the sampling: a `GRPOTrainer` is built with the two-environment
dict `environment_factory` and no reward functions, on a tiny random Qwen3-shaped model and a
byte-level tokenizer made here (nothing is downloaded), with TRL's own Qwen3 chat template.
Then `_generate_and_score_completions` runs on a batch of the example's dataset rows: TRL picks
each row's environment, calls `reset(**row)`, renders each environment's tools into its prompt
(transformers' `get_json_schema` on the public methods), parses the tool calls out of the
completions, executes them, feeds the results back, and scores every rollout with the
environments' `get_reward`. Only `_generate_single_turn` is replaced: instead of sampling, a
script writes the completion a model would write, the Qwen3 tool call of a reference policy
(ServiceBench's oracle, Support Queue's heuristic), read off the decoded conversation so far.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers  # noqa: E402
from transformers import PreTrainedTokenizerFast, Qwen3Config, Qwen3ForCausalLM  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402
from trl.chat_template_utils import qwen3_chat_template  # noqa: E402

from servicebench_support_queue.action_tools import TOOLS  # noqa: E402
from servicebench_support_queue.client import EnvHttpClient  # noqa: E402
from servicebench_support_queue.models import SupportQueueObservation, Ticket  # noqa: E402
from servicebench_support_queue.server.servicebench.oracle import next_action  # noqa: E402
from servicebench_support_queue.server.support_queue.heuristic import triage  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
STOP_EARLY = "[script: stop after one call]"
BAD_CALL_FIRST = "[script: an invalid call first]"
NUM_GENERATIONS = 2
END_OF_TURN = "<|im_end|>"

_spec = importlib.util.spec_from_file_location(
    "trl_environment", REPO / "examples" / "trl_environment.py"
)
example = importlib.util.module_from_spec(_spec)
sys.modules["trl_environment"] = example
_spec.loader.exec_module(example)


# ----------------------------------------------------------------------------- model and tokenizer


def build_tokenizer() -> PreTrainedTokenizerFast:
    """A byte-level BPE (decode(encode(text)) == text) with Qwen3's special tokens and chat template."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    special = ["<|endoftext|>", "<|im_start|>", END_OF_TURN]
    trainer = trainers.BpeTrainer(
        vocab_size=2000,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=special,
    )
    corpus = [(REPO / "examples" / "trl_environment.py").read_text(), qwen3_chat_template]
    tokenizer.train_from_iterator(corpus * 3, trainer)
    words = [
        "<tool_call>",
        "</tool_call>",
        "<tool_response>",
        "</tool_response>",
        "<think>",
        "</think>",
    ]
    tokenizer.add_tokens([AddedToken(word, special=False, normalized=False) for word in words])
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, eos_token=END_OF_TURN, pad_token="<|endoftext|>"
    )
    wrapped.chat_template = qwen3_chat_template
    return wrapped


def build_model(vocab_size: int) -> Qwen3ForCausalLM:
    torch.manual_seed(0)
    config = Qwen3Config(
        vocab_size=vocab_size,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=8,
        max_position_embeddings=65536,
    )
    return Qwen3ForCausalLM(config)


# ----------------------------------------------------------------------------- the scripted "model"

TOOL_RESPONSE = re.compile(r"<tool_response>\n(.*?)\n</tool_response>", re.S)
FIRST_USER = re.compile(r"<\|im_start\|>user\n(.*?)<\|im_end\|>", re.S)
TOOL_NAME = {tool.route: tool.name for tool in TOOLS["servicebench"]}


def tool_call(name: str, arguments: dict[str, Any]) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>{END_OF_TURN}"


def servicebench_move(task_ids: dict[str, str], request: str, results: list[str]) -> str | None:
    """The oracle's next call as a tool call, from the task text and the tool results so far."""
    shown = request.split("\n\n", 1)[1].rsplit("\n\nUse the service tools", 1)[0]
    description, policy = shown.split(f"\n\n{example.POLICY_HEADING}\n", 1)
    history: list[dict[str, Any]] = [
        {
            "task_id": task_ids[description],
            "task_description": description,
            "policy": policy,
            "done": False,
        }
    ]
    for text in results:
        if text.startswith("{'error'"):
            raise AssertionError(f"a tool failed: {text}")
        answer = json.loads(text)
        failed = answer["error"] is not None
        history.append(
            {
                "success": not failed,
                "error_message": answer["error"],
                "api_response": {
                    "status_code": answer["status_code"],
                    "data": answer["response"],
                    "error": answer["error"],
                },
                "done": answer["episode_done"],
            }
        )
    action = next_action(history)
    if action is None:
        return None
    return tool_call(TOOL_NAME[(action.service, action.endpoint, action.method)], action.params)


def support_queue_move(request: str, results: list[str]) -> str | None:
    """The heuristic's triage of the ticket shown last, or None once the queue is done."""
    latest = results[-1] if results else request
    if "The queue is done." in latest:
        return None
    ticket = json.JSONDecoder().raw_decode(latest, latest.index("{", latest.index("Ticket ")))[0]
    action = triage(SupportQueueObservation(ticket=Ticket.model_validate(ticket)))
    return tool_call("triage", action.model_dump(mode="json", exclude={"metadata"}))


class Script:
    """Writes the next completion of a conversation, as a model following the policy would."""

    def __init__(self, tokenizer: PreTrainedTokenizerFast, task_ids: dict[str, str]) -> None:
        self.tokenizer, self.task_ids = tokenizer, task_ids
        self.turns = 0

    def __call__(self, prompt_ids: list[int]) -> list[int]:
        self.turns += 1
        text = self.tokenizer.decode(prompt_ids)
        request = FIRST_USER.search(text).group(1)
        results = TOOL_RESPONSE.findall(text)
        if STOP_EARLY in request and results:
            move = None
        elif BAD_CALL_FIRST in request and not results:
            move = tool_call(
                "triage",
                {
                    "priority": "P9",
                    "queue": "billing",
                    "disposition": "respond",
                    "summary": "",
                    "response": "",
                },
            )
        elif '"name": "triage"' in text:
            move = support_queue_move(request, [r for r in results if not r.startswith("{'error'")])
        else:
            move = servicebench_move(self.task_ids, request, results)
        return self.tokenizer.encode(move or f"Done.{END_OF_TURN}")


class ScriptedTrainer(GRPOTrainer):
    """GRPOTrainer whose completions come from `script` instead of sampling; rewards are kept."""

    script: Script
    rewards_seen: list[torch.Tensor]

    def _generate_single_turn(
        self, prompt_ids, images, multimodal_fields, num_generations, has_tool_images=False
    ):  # noqa: ANN001
        return [self.script(list(ids)) for ids in prompt_ids], None

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):  # noqa: ANN001
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self.rewards_seen.append(rewards.detach().cpu())
        return rewards


# ----------------------------------------------------------------------------- the run


def descriptions(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Each ServiceBench row's task text -> its task id (a seeded variant has its own text)."""
    found = {}
    with EnvHttpClient(example.env_base_url()) as client:
        for row in rows:
            if row["environment"] == "servicebench":
                result = client.reset(env="servicebench", task_id=row["task_id"], seed=row["seed"])
                found[result.observation.task_description] = row["task_id"]
    return found


def batch_rows() -> list[dict[str, Any]]:
    """Every task on its first training seed (the example's own dataset), plus two scripted oddities."""
    with EnvHttpClient(example.env_base_url()) as client:
        cards = client.tasks()
    tasks = example.select_tasks(cards, example.BOTH, None)
    rows = example.training_rows(tasks, example.BOTH, len(tasks), first_seed=1)
    odd = [
        row for row in example.training_rows(tasks, example.BOTH, 2 * len(tasks), 1)[len(tasks) :]
    ]
    support = [row for row in odd if row["environment"] == "support_queue"][:2]
    for row, marker in zip(support, (STOP_EARLY, BAD_CALL_FIRST), strict=True):
        row["prompt"] = [{"role": "user", "content": f"{example.INSTRUCTION} {marker}"}]
    return rows + support


def main() -> None:
    rows = batch_rows()
    tokenizer = build_tokenizer()
    with tempfile.TemporaryDirectory() as output_dir:
        trainer = ScriptedTrainer(
            model=build_model(len(tokenizer)),
            processing_class=tokenizer,
            train_dataset=Dataset.from_list(rows),
            environment_factory=example.environment_factory(example.BOTH),
            args=GRPOConfig(
                **{
                    **example.GRPO_SETTINGS,  # the example's training settings, but for these:
                    "output_dir": output_dir,
                    "log_completions": False,  # stdout carries the JSON document alone
                    "use_cpu": True,
                    "report_to": "none",
                    "num_generations": NUM_GENERATIONS,
                    "per_device_train_batch_size": NUM_GENERATIONS * len(rows),
                    "max_completion_length": 32768,  # byte-level tokens: long episodes
                }
            ),
        )
        trainer.script = Script(tokenizer, descriptions(rows))
        trainer.rewards_seen = []
        batch = [dict(row) for row in rows for _ in range(NUM_GENERATIONS)]
        trainer.model.train()
        trainer._generate_and_score_completions(batch)
    [rewards] = trainer.rewards_seen
    rollouts = []
    for row, per_source, environment in zip(
        batch, rewards.tolist(), trainer.environments, strict=True
    ):
        rollouts.append(
            {
                "environment": row["environment"],
                "task_id": row["task_id"],
                "seed": row["seed"],
                "prompt": row["prompt"][0]["content"],
                "class": type(environment).__name__,
                "rewards": [None if math.isnan(value) else value for value in per_source],
                "done": environment.done,
            }
        )
    metrics = {name: values[-1] for name, values in trainer._metrics["train"].items() if values}
    document = {
        "reward_sources": list(trainer.reward_func_names),
        "tools": {
            name: sorted(t.__name__ for t in tools) for name, tools in trainer._env_tools.items()
        },
        "rollouts": rollouts,
        "metrics": metrics,
        "scripted_turns": trainer.script.turns,
    }
    sys.stdout.write(json.dumps(document) + "\n")


if __name__ == "__main__":
    main()
